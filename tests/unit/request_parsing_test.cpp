// parse_json_body and the quoting helpers on hostile input: nesting is refused at the limit (and
// deep input far past it costs nothing), NUL padding and trailing bytes are refused, a number out
// of a double's range names its field, and no message grows with the client's value.
#include <gtest/gtest.h>

#include <string>

#include "server/request_parsing.hpp"

namespace kt {
namespace {

// The ApiError parse_json_body throws (fails the test if it returns).
ApiError refusal_of(const std::string& body) {
  try {
    parse_json_body(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body.substr(0, 80);
  return ApiError(HttpStatus::ok, "", "");
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(ParseJsonBodyTest, NestingUpToTheLimitIsAcceptedOneMoreIsRefused) {
  const nlohmann::json deepest = parse_json_body(nested_arrays(kMaxJsonDepth));
  EXPECT_TRUE(deepest.is_array());

  const ApiError error = refusal_of(nested_arrays(kMaxJsonDepth + 1));
  EXPECT_EQ(error.status(), HttpStatus::bad_request);
  EXPECT_EQ(error.code(), "nesting_too_deep");
  EXPECT_NE(std::string(error.what()).find("64"), std::string::npos) << error.what();

  // Objects count as levels too.
  std::string objects;
  for (int i = 0; i <= kMaxJsonDepth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(kMaxJsonDepth + 1, '}');
  EXPECT_EQ(refusal_of(objects).code(), "nesting_too_deep");
}

TEST(ParseJsonBodyTest, MegabytesOfOpenBracketsAreRefusedNotRecursedInto) {
  // Unclosed: the parser must stop at the limit, not read (or build) 200,000 levels.
  const ApiError open = refusal_of(std::string(200'000, '['));
  EXPECT_EQ(open.code(), "nesting_too_deep");
  // Inside a field, where a message once dumped the value recursively.
  const ApiError in_field =
      refusal_of(R"({"family":"gemm","shape":{"m":)" + nested_arrays(100'000) + "}}");
  EXPECT_EQ(in_field.code(), "nesting_too_deep");
  EXPECT_LT(std::string(in_field.what()).size(), 200u);
}

TEST(ParseJsonBodyTest, NulPaddingAndTrailingBytesAreRefused) {
  const std::string good = R"({"family":"gemm"})";
  EXPECT_EQ(parse_json_body(good + " \n\t\r ")["family"], "gemm");  // whitespace may follow

  const ApiError nul = refusal_of(good + std::string(16, '\0'));
  EXPECT_EQ(nul.status(), HttpStatus::bad_request);
  EXPECT_EQ(nul.code(), "invalid_json");
  EXPECT_NE(std::string(nul.what()).find("NUL byte at byte 17"), std::string::npos) << nul.what();

  EXPECT_EQ(refusal_of(good + "x").code(), "invalid_json");
  EXPECT_EQ(refusal_of(good + good).code(), "invalid_json");
  EXPECT_EQ(refusal_of(good + " 7").code(), "invalid_json");
}

TEST(ParseJsonBodyTest, NumberBeyondADoubleNamesItsFieldAndIsA400) {
  const ApiError in_shape = refusal_of(R"({"shape": {"m": 1e99999}})");
  EXPECT_EQ(in_shape.status(), HttpStatus::bad_request);
  EXPECT_EQ(in_shape.code(), "invalid_field");
  EXPECT_NE(std::string(in_shape.what()).find("'shape.m'"), std::string::npos) << in_shape.what();

  const ApiError in_array = refusal_of(R"({"configs": [{"BM": 64}, {"BN": -1e400}]})");
  EXPECT_NE(std::string(in_array.what()).find("'configs[1].BN'"), std::string::npos)
      << in_array.what();

  // A number of 100,000 digits: the message quotes a prefix, not the number.
  const ApiError long_number = refusal_of(R"({"budget": 1)" + std::string(100'000, '0') + "}");
  EXPECT_EQ(long_number.code(), "invalid_field");
  EXPECT_NE(std::string(long_number.what()).find("'budget'"), std::string::npos);
  EXPECT_LT(std::string(long_number.what()).size(), 200u) << long_number.what();
}

TEST(ParseJsonBodyTest, SyntaxErrorsQuoteOnlyAShortPrefixOfTheToken) {
  // An unterminated string of 500 KB: nlohmann's own message would hold all of it.
  const ApiError error = refusal_of(R"({"family":")" + std::string(500'000, 'a'));
  EXPECT_EQ(error.code(), "invalid_json");
  const std::string message = error.what();
  EXPECT_LT(message.size(), 300u) << message.substr(0, 400);
  EXPECT_NE(message.find("bytes)"), std::string::npos) << message;
  EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
}

TEST(QuoteClientTextTest, ShortTextIsQuotedWholeAndEscaped) {
  EXPECT_EQ(quote_client_text("gem"), "'gem'");
  EXPECT_EQ(quote_client_text(std::string("a\nb\x01", 4)), "'a\\nb\\u0001'");
}

TEST(QuoteClientTextTest, LongTextIsCutToThePrefixAndSaysHowLong) {
  const std::string quoted = quote_client_text(std::string(5000, 'x'));
  EXPECT_EQ(quoted, "'" + std::string(kQuotedPrefixChars, 'x') + "'... (5000 bytes)");
  // The cut never splits a UTF-8 character ("é" is 2 bytes; 39 x + é crosses byte 40).
  const std::string text = std::string(kQuotedPrefixChars - 1, 'x') + "\xc3\xa9" + "tail";
  EXPECT_EQ(quote_client_text(text), "'" + std::string(kQuotedPrefixChars - 1, 'x') + "'... (" +
                                         std::to_string(text.size()) + " bytes)");
}

TEST(DescribeClientValueTest, ContainersAreDescribedNeverDumped) {
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 100'000; ++i) {
    nlohmann::json outer = nlohmann::json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  EXPECT_EQ(describe_client_value(deep), "an array of 1 elements");
  EXPECT_EQ(describe_client_value(nlohmann::json{{"a", 1}, {"b", 2}}), "an object of 2 fields");
  EXPECT_EQ(describe_client_value(2.5), "2.5");
  EXPECT_EQ(describe_client_value(-1), "-1");
  EXPECT_EQ(describe_client_value("64"), "the string '64'");
  EXPECT_LT(describe_client_value(std::string(1 << 20, 'q')).size(), 80u);
}

}  // namespace
}  // namespace kt
