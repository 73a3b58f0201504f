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

}  // namespace
}  // namespace kt
