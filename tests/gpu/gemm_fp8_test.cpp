// The gemm_fp8 family on a real Hopper GPU through the measurement worker: the wgmma template on
// ragged shapes (M and N multiples of no tile, M = 1, K a multiple of 16 but not of 128, a
// decode shape whose 33 tiles stream-K shares over every SM), e4m3 and e5m2 A, per-tensor and
// block scales, a few configs each covering most axis values, checked element by element against
// the family's fp32 reference of the dequantized inputs; a variant built to read the wrong scale
// block (one k-block's scales taken from its neighbour) is rejected; and the baseline (cuBLASLt
// fp8 with the same scales) is checked and timed. Skipped without a device or on other archs.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/family_template_fixture.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

Shape fp8_shape(int m, int n, int k, int block_scaled) {
  return {{"M", m}, {"N", n}, {"K", k}, {"BLOCK_SCALED", block_scaled}};
}

class GemmFp8Wgmma : public test::FamilyTemplateOnGpu {
 protected:
  GemmFp8Wgmma() : FamilyTemplateOnGpu("gemm_fp8", "wgmma_fp8_tma_ws") {}
};

TEST_F(GemmFp8Wgmma, CorrectOnRaggedShapesBothDtypesBothScalings) {
  std::vector<test::FamilyCase> cases;
  for (const int block_scaled : {0, 1})
    for (const Shape& shape :
         {fp8_shape(257, 193, 528, block_scaled), fp8_shape(1, 1000, 2064, block_scaled),
          fp8_shape(1000, 3000, 1040, block_scaled), fp8_shape(64, 2112, 7168, block_scaled)})
      for (const std::string dtype : {"e4m3", "e5m2"})
        for (const Config& c : configs(shape, dtype, 3)) cases.push_back({dtype, shape, c});
  ASSERT_GE(cases.size(), 16u);
  compile_all(cases);
  for (const auto& c : cases) expect_correct(c);
}

TEST_F(GemmFp8Wgmma, AWrongScaleBlockIsRejected) {
  const Shape shape = fp8_shape(512, 512, 1024, 1);
  const std::vector<Config> found = configs(shape, "e4m3", 1);
  ASSERT_FALSE(found.empty());
  const test::FamilyCase c{"e4m3", shape, found.front()};
  compile_all({c}, {"-DKT_TEST_WRONG_SCALE_BLOCK=1"});
  const MeasureResult r = client_->measure(request(c, false), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.failed_gate << ": " << r.reason;
  ASSERT_TRUE(r.error.has_value());
  EXPECT_GT(r.error->bad_elements, 0) << "k-block 1 scaled by k-block 0's factors";
}

TEST_F(GemmFp8Wgmma, BaselineIsCheckedThenTimedInBothScalings) {
  for (const int block_scaled : {0, 1}) {
    const Shape shape = fp8_shape(1024, 2048, 1024, block_scaled);
    const std::vector<Config> found = configs(shape, "e4m3", 1);
    ASSERT_FALSE(found.empty());
    compile_all({{"e4m3", shape, found.front()}});
    BaselineTimingRequest r;
    r.problem = problem(found.front(), shape, "e4m3");
    ASSERT_TRUE(r.problem.baseline.has_value());
    ASSERT_EQ(r.problem.baseline->kind, "cublaslt_fp8_gemm");
    r.timing.max_seconds = 0.3;
    r.tolerance = baseline_check_tolerance(family().tolerance.at("e4m3"));
    std::string reason;
    const auto answer = client_->time_baseline(r, 120s, &reason);
    ASSERT_TRUE(answer) << "BLOCK_SCALED " << block_scaled << ": " << reason;
    ASSERT_TRUE(answer->error.has_value());
    EXPECT_EQ(answer->error->bad_elements, 0) << "BLOCK_SCALED " << block_scaled;
    EXPECT_GT(answer->timing.median_us, 0.0);
    EXPECT_EQ(answer->baseline.value("kind", ""), "cublaslt_fp8_gemm") << answer->baseline.dump();
    std::printf("[baseline] BLOCK_SCALED %d: %.1f us, %s\n", block_scaled, answer->timing.median_us,
                answer->baseline.dump().c_str());
  }
}

}  // namespace
}  // namespace kt
