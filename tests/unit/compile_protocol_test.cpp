// The compile processes' protocol (tuner/compile/compile_protocol.hpp): base64 of every length
// remainder and of all byte values, a result through JSON and back, a request with and without
// its headers, and malformed answers refused.
#include "tuner/compile/compile_protocol.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt {
namespace {

TEST(CompileProtocol, Base64RoundTripsEveryLengthAndByte) {
  std::vector<char> bytes;
  for (int length = 0; length <= 260; ++length) {
    const std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    EXPECT_EQ(base64_decode(text), bytes) << "length " << length;
    bytes.push_back(static_cast<char>(length * 37));
  }
  EXPECT_EQ(base64_encode({'a', 'b'}), "YWI=");
  EXPECT_THROW(base64_decode("abc"), std::runtime_error);
  EXPECT_THROW(base64_decode("a!c="), std::runtime_error);
}

TEST(CompileProtocol, AResultComesBackAsItWent) {
  CompileResult result;
  result.ok = true;
  result.log = "ptxas info    : Used 98 registers\n\"quoted\"";
  result.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
  result.resources = {98, 4, 8, 16, 32768, 400};
  result.compile_ms = 12.5;
  result.key = "abc";
  const CompileResult back =
      compile_result_from_json(nlohmann::json::parse(to_json(result).dump()));
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.log, result.log);
  EXPECT_EQ(back.cubin, result.cubin);
  EXPECT_EQ(back.resources.registers, 98);
  EXPECT_EQ(back.resources.spill_store_bytes, 4);
  EXPECT_EQ(back.resources.spill_load_bytes, 8);
  EXPECT_EQ(back.resources.stack_frame_bytes, 16);
  EXPECT_EQ(back.resources.static_smem_bytes, 32768);
  EXPECT_EQ(back.resources.const_bytes, 400);
  EXPECT_EQ(back.compile_ms, 12.5);
  EXPECT_EQ(back.key, "abc");

  nlohmann::json no_cubin = to_json(result);
  no_cubin["cubin"] = "";
  EXPECT_THROW(compile_result_from_json(no_cubin), std::runtime_error);
  nlohmann::json no_resources = to_json(result);
  no_resources.erase("resources");
  EXPECT_ANY_THROW(compile_result_from_json(no_resources));
}

// A message from another build names the field it lacks or mistypes, with its path.
TEST(CompileProtocol, AMissingOrMistypedFieldIsNamed) {
  const auto message = [](const nlohmann::json& json, auto parse) {
    try {
      parse(json);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  CompileResult result;
  result.ok = true;
  result.cubin = {'x'};
  nlohmann::json answer = to_json(result);
  answer["resources"].erase("registers");
  EXPECT_EQ(message(answer, compile_result_from_json),
            "missing field 'compile answer.resources.registers'");
  answer = to_json(result);
  answer["compile_ms"] = "fast";
  EXPECT_EQ(message(answer, compile_result_from_json),
            "field 'compile answer.compile_ms' must be a number");

  CompileRequest request;
  request.kernel = "k";
  request.arch = "sm_90a";
  nlohmann::json asked = to_json(request);
  asked["options"] = {"-DA=1", 2};
  EXPECT_EQ(message(asked, compile_request_from_json),
            "field 'compile request.options' must be an array of strings");
  asked = to_json(request);
  asked["headers"] = {{"h.h"}};
  EXPECT_EQ(message(asked, compile_request_from_json),
            "field 'compile request.headers' must be an array of [name, text] pairs");
  asked = to_json(request);
  asked.erase("arch");
  EXPECT_EQ(message(asked, compile_request_from_json), "missing field 'compile request.arch'");
}

TEST(CompileProtocol, ARequestCarriesItsHeadersOrTheirIdAlone) {
  CompileRequest request;
  request.source_name = "k.cuh";
  request.source = "#include \"h.h\"\n";
  request.headers = {{"h.h", "#define X 1\n"}, {"g.h", ""}};
  request.kernel = "k";
  request.arch = "sm_90a";
  request.options = {"-DA=1", "-DB=2"};
  const nlohmann::json full = to_json(request);
  const nlohmann::json bare = to_json(request, false);
  EXPECT_EQ(full.at("headers_id"), bare.at("headers_id"));
  EXPECT_EQ(full.at("headers_id").get<std::string>(), headers_id(request.headers));
  EXPECT_FALSE(bare.contains("headers"));
  const CompileRequest back = compile_request_from_json(full);
  EXPECT_EQ(back.headers, request.headers);
  EXPECT_EQ(back.source, request.source);
  EXPECT_EQ(back.options, request.options);
  EXPECT_EQ(back.kernel, "k");
  EXPECT_EQ(back.arch, "sm_90a");
  EXPECT_TRUE(compile_request_from_json(bare).headers.empty());
  // Any change of a header's name or text is another id; the order matters too.
  auto renamed = request.headers;
  renamed[0].first = "i.h";
  EXPECT_NE(headers_id(renamed), headers_id(request.headers));
  auto swapped = request.headers;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(headers_id(swapped), headers_id(request.headers));
}

}  // namespace
}  // namespace kt
