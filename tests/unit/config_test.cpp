#include "tuner/config.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(CanonicalKey, SortsNamesAndRoundTrips) {
  const Config config{{"STAGES", 3}, {"BM", 128}, {"BN", 64}};
  EXPECT_EQ(canonical_key(config), "BM=128,BN=64,STAGES=3");
  EXPECT_EQ(parse_canonical_key(canonical_key(config)), config);
  EXPECT_EQ(canonical_key({}), "");
  EXPECT_TRUE(parse_canonical_key("").empty());
}

TEST(CanonicalKey, KeepsNegativeAndLargeValues) {
  const Shape shape{{"M", 1LL << 40}, {"OFFSET", -7}};
  EXPECT_EQ(canonical_key(shape), "M=1099511627776,OFFSET=-7");
  EXPECT_EQ(parse_canonical_key(canonical_key(shape)), shape);
}

TEST(CanonicalKey, EqualMapsGiveEqualKeysWhateverTheInsertionOrder) {
  Shape a;
  a["N"] = 2;
  a["M"] = 1;
  Shape b;
  b["M"] = 1;
  b["N"] = 2;
  EXPECT_EQ(canonical_key(a), canonical_key(b));
}

TEST(ParseCanonicalKey, RejectsMalformedText) {
  for (const char* bad : {"M", "=4", "M=", "M=4x", "M=4,N", "M=1.5", "M=99999999999999999999"})
    EXPECT_THROW(parse_canonical_key(bad), std::invalid_argument) << bad;
}

TEST(IntMapJson, RoundTripsAndRejectsNonIntegers) {
  const Shape shape{{"K", 4096}, {"M", 64}};
  const nlohmann::json j = to_json(shape);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"K":4096,"M":64})"));
  EXPECT_EQ(int_map_from_json(j), shape);
  EXPECT_TRUE(int_map_from_json(nlohmann::json::object()).empty());
  EXPECT_THROW(int_map_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(int_map_from_json(nlohmann::json::parse(R"({"M":"64"})")), std::invalid_argument);
  EXPECT_THROW(int_map_from_json(nlohmann::json::parse(R"({"M":1.5})")), std::invalid_argument);
  try {
    int_map_from_json(nlohmann::json::parse(R"({"M":1,"N":true})"));
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'N'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kt
