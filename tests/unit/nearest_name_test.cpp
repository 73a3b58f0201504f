// tuner/nearest_name: the "did you mean" of the refusals for families, archs, dtypes, searches.
#include "tuner/nearest_name.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

const std::vector<std::string> kFamilies{"attention_fwd", "dual_gemm_silu", "gemm"};
const std::vector<std::string> kArchs{"sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a"};
const std::vector<std::string> kDtypes{"bf16", "fp16"};

TEST(NearestName, SeparatorsAndCaseAreIgnoredFirst) {
  EXPECT_EQ(nearest_name("sm90a", kArchs), "sm_90a");
  EXPECT_EQ(nearest_name("SM_100A", kArchs), "sm_100a");
  EXPECT_EQ(nearest_name("dual-gemm-silu", kFamilies), "dual_gemm_silu");
}

TEST(NearestName, OneOrTwoEditsAwayByLength) {
  EXPECT_EQ(nearest_name("gem", kFamilies), "gemm");
  EXPECT_EQ(nearest_name("gemmm", kFamilies), "gemm");
  EXPECT_EQ(nearest_name("atention_fwd", kFamilies), "attention_fwd");
  EXPECT_EQ(nearest_name("sm_100b", kArchs), "sm_100a");
  EXPECT_EQ(nearest_name("sm_90b", kArchs), std::nullopt);  // sm_90 and sm_90a are as near
  EXPECT_EQ(nearest_name("conv2d", kFamilies), std::nullopt);  // nothing near
  EXPECT_EQ(nearest_name("bf8", kDtypes), std::nullopt);       // 2 edits: too far for 3 letters
  EXPECT_EQ(nearest_name("", kDtypes), std::nullopt);
}

TEST(NearestName, TheDtypesNamesOfTorchAndNumpy) {
  EXPECT_EQ(nearest_name("bfloat16", kDtypes), "bf16");
  EXPECT_EQ(nearest_name("torch.float16", kDtypes), "fp16");
  EXPECT_EQ(nearest_name("half", kDtypes), "fp16");
  EXPECT_EQ(nearest_name("float32", kDtypes), std::nullopt);  // f32 is not among them
}

TEST(NearestName, ATieSuggestsNothing) {
  EXPECT_EQ(nearest_name("sm_8", {"sm_80", "sm_89"}), std::nullopt);
  EXPECT_EQ(did_you_mean("sm_8", {"sm_80", "sm_89"}), "");
  EXPECT_EQ(did_you_mean("gemmm", kFamilies), " (did you mean gemm?)");
  EXPECT_EQ(did_you_mean("gemm", kFamilies), "");  // the name itself needs no correction
}

}  // namespace
}  // namespace kt
