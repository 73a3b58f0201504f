// Issue 14's real-model shapes against the shipped GEMM family: which templates survive the
// constraints on an H100 (what kt-bench gemm --shape-set models can run at all), and the problem
// a job times the baseline on when none survive.
#include <gtest/gtest.h>

#include <map>

#include "support/shipped_family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

DeviceLimits h100_limits() {
  DeviceLimits limits = limits_for_arch("sm_90a").value();
  limits.sm_count = 132;
  return limits;
}

// Surviving variants per template of the sm_90a space (templates for other archs left out).
std::map<std::string, int> survivors(const Shape& shape) {
  std::map<std::string, int> counts;
  for (const VariantPlan& plan :
       enumerate_variants(test::shipped_family("gemm"), shape, "bf16", h100_limits())) {
    if (plan.unsupported_arch) continue;
    counts[plan.tmpl->name] += plan.pruned_by ? 0 : 1;
  }
  return counts;
}

Shape gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}

// Every model shape has survivors on an H100, so each row can run. K % 8 != 0 (16x4096x4097)
// prunes the TMA templates (wgmma_tma_ws, wgmma_pingpong: "K % 8 == 0"); mma_multistage_cluster
// and skinny_splitk fall back to element loads, wgmma_cp_async to VEC=2. Odd N (32001) keeps the
// TMA templates with EPILOGUE=0 only (312 and 144 of 597 and 300 at N=32000).
TEST(GemmModelShapes, EveryShapeHasSurvivors) {
  const auto unaligned_k = survivors(gemm(16, 4096, 4097));
  EXPECT_EQ(unaligned_k.at("wgmma_tma_ws"), 0);
  EXPECT_EQ(unaligned_k.at("wgmma_pingpong"), 0);
  EXPECT_GT(unaligned_k.at("mma_multistage_cluster"), 0);
  EXPECT_GT(unaligned_k.at("skinny_splitk"), 0);
  EXPECT_GT(unaligned_k.at("wgmma_cp_async"), 0);
  const auto even = survivors(gemm(4096, 32000, 4096));
  const auto odd = survivors(gemm(4096, 32001, 4096));
  EXPECT_GT(odd.at("wgmma_tma_ws"), 0);
  EXPECT_LT(odd.at("wgmma_tma_ws"), even.at("wgmma_tma_ws"));
  EXPECT_GT(odd.at("wgmma_pingpong"), 0);
  EXPECT_EQ(odd.at("mma_multistage_cluster"), even.at("mma_multistage_cluster"));
  for (const Shape& shape : {gemm(8, 128256, 4096), gemm(2000, 5120, 13824), gemm(3000, 1000, 1000),
                             gemm(777, 4096, 4096), gemm(4096, 96, 4096), gemm(1, 11008, 4096),
                             gemm(4096, 4096, 4104)}) {
    int total = 0;
    for (const auto& [name, count] : survivors(shape)) total += count;
    EXPECT_GT(total, 0) << canonical_key(shape);
  }
}

// A job none of whose variants survives still times the baseline, on this problem: inputs and
// output only (the split-K scratch buffers depend on a variant), the reference and cublasLt.
TEST(GemmModelShapes, BaselineInstanceNeedsNoVariant) {
  const ProblemInstance problem =
      baseline_instance(test::shipped_family("gemm"), gemm(16, 4096, 4097), "bf16", h100_limits());
  ASSERT_EQ(problem.buffers.size(), 3u);
  EXPECT_EQ(problem.buffers[0].name, "A");
  EXPECT_EQ(problem.buffers[0].elements, 16 * 4097);
  EXPECT_EQ(problem.buffers[2].name, "C");
  EXPECT_EQ(problem.reference.kind, "cublas_gemm");
  ASSERT_TRUE(problem.baseline.has_value());
  EXPECT_EQ(problem.baseline->kind, "cublaslt_gemm");
  EXPECT_EQ(problem.baseline->params["k"], 4097);
  EXPECT_DOUBLE_EQ(problem.flops, 2.0 * 16 * 4096 * 4097);
}

}  // namespace
}  // namespace kt
