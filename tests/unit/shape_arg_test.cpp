// The CLI's --shape parsing and the mapping of dim names onto a family's spelling.
#include <gtest/gtest.h>

#include <stdexcept>

#include "client/shape_arg.hpp"

namespace kt {
namespace {

TEST(ShapeArg, ParsesNameValuePairs) {
  const auto shape = parse_shape_arg("m=4096, n=64 ,k=7168");
  EXPECT_EQ(shape, (std::map<std::string, std::int64_t>{{"m", 4096}, {"n", 64}, {"k", 7168}}));
  EXPECT_EQ(parse_shape_arg("M=1,").size(), 1u);
}

TEST(ShapeArg, RejectsMalformedItems) {
  for (const std::string bad : {"", "m", "m=", "=4", "m=4k", "m=1.5", "m=1,M=2", "m=1,,n"})
    EXPECT_THROW(parse_shape_arg(bad), std::invalid_argument) << bad;
}

TEST(ShapeArg, MatchesFamilyDimsCaseInsensitively) {
  const nlohmann::json family = {{"name", "gemm"},
                                 {"dims", {{{"name", "M"}}, {{"name", "N"}}, {{"name", "K"}}}}};
  const auto matched = match_family_dims({{"m", 1}, {"N", 2}, {"k", 3}, {"q", 4}}, family);
  EXPECT_EQ(matched, (std::map<std::string, std::int64_t>{{"M", 1}, {"N", 2}, {"K", 3}, {"q", 4}}));
}

const nlohmann::json kGemm = {{"name", "gemm"},
                              {"dims", {{{"name", "M"}}, {{"name", "N"}}, {{"name", "K"}}}}};

TEST(ShapeArg, ExtentsAloneFollowTheFamilysDimOrder) {
  EXPECT_TRUE(is_positional_shape("4096x4096x4096"));
  EXPECT_TRUE(is_positional_shape("64X4096x7168"));
  EXPECT_FALSE(is_positional_shape("m=4096"));
  EXPECT_FALSE(is_positional_shape("4096xx4"));
  EXPECT_FALSE(is_positional_shape("x4096"));
  EXPECT_EQ(shape_for_family("64x4096x7168", kGemm),
            (std::map<std::string, std::int64_t>{{"M", 64}, {"N", 4096}, {"K", 7168}}));
  EXPECT_EQ(shape_for_family("m=1,n=2,k=3", kGemm),
            (std::map<std::string, std::int64_t>{{"M", 1}, {"N", 2}, {"K", 3}}));
  // The server refuses an unknown family itself, listing the known ones.
  EXPECT_TRUE(shape_for_family("64x64x64", nullptr).empty());
}

TEST(ShapeArg, ExtentCountMustMatchTheFamilysDims) {
  try {
    shape_for_family("4096x4096", kGemm);
    FAIL() << "two extents for three dims accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("in this order: MxNxK"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(shape_for_family("99999999999999999999x1x1", kGemm), std::invalid_argument);
}

TEST(ShapeArg, TrailingDimsWithDefaultsMayBeLeftOut) {
  const nlohmann::json fp8 = {{"name", "gemm_fp8"},
                              {"dims",
                               {{{"name", "M"}},
                                {{"name", "N"}},
                                {{"name", "K"}},
                                {{"name", "BLOCK_SCALED"}, {"default", 0}}}}};
  EXPECT_EQ(shape_for_family("64x2112x7168", fp8),
            (std::map<std::string, std::int64_t>{{"M", 64}, {"N", 2112}, {"K", 7168}}))
      << "the daemon fills BLOCK_SCALED in";
  EXPECT_EQ(shape_for_family("64x2112x7168x1", fp8).at("BLOCK_SCALED"), 1);
  try {
    shape_for_family("64x2112", fp8);
    FAIL() << "K has no default";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("the last 1 with defaults may be left out"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(shape_for_family("1x2x3x1x5", fp8), std::invalid_argument);
}

}  // namespace
}  // namespace kt
