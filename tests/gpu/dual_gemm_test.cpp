// The dual_gemm_silu family on a real GPU through the measurement worker: the Hopper template
// (wgmma_tma_ws) on ragged shapes (M and N multiples of no tile, G = 2, K a multiple of 8 but
// not of 64), bf16 and fp16, a few configs each covering most axis values (split-K, clusters,
// persistent grids among them), checked element by element against the family's reference
// kernel; and the family's baseline, the unfused path (two batched cublasLt GEMMs and the
// element-wise SiLU-multiply), checked against the same reference and then timed. Skipped
// without a device.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/family_template_fixture.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

Shape dual_shape(int g, int m, int n, int k) {
  return {{"G", g}, {"M", m}, {"N", n}, {"K", k}};
}

class DualGemmWgmma : public test::FamilyTemplateOnGpu {
 protected:
  DualGemmWgmma() : FamilyTemplateOnGpu("dual_gemm_silu", "wgmma_tma_ws") {}
};

TEST_F(DualGemmWgmma, CorrectOnRaggedGroupedShapesBothDtypes) {
  std::vector<test::FamilyCase> cases;
  // 200 x 300: ragged for every BM and BN; 45 rows: a small-M group (BM 64, split-K survivors);
  // 520: K not a multiple of 64.
  const std::vector<Shape> shapes = {dual_shape(2, 200, 300, 520), dual_shape(2, 45, 330, 1024)};
  for (const std::string dtype : {"bf16", "fp16"})
    for (const Shape& shape : shapes)
      for (const Config& c : configs(shape, dtype, 4)) cases.push_back({dtype, shape, c});
  ASSERT_GE(cases.size(), 8u);
  compile_all(cases);
  for (const auto& c : cases) expect_correct(c);
}

TEST_F(DualGemmWgmma, UnfusedBaselineIsCheckedThenTimed) {
  const Shape shape = dual_shape(2, 200, 300, 520);
  const std::vector<Config> found = configs(shape, "bf16", 1);
  ASSERT_FALSE(found.empty());
  for (const std::string dtype : {"bf16", "fp16"}) {
    compile_all({{dtype, shape, found.front()}});
    BaselineTimingRequest r;
    r.problem = problem(found.front(), shape, dtype);
    ASSERT_TRUE(r.problem.baseline.has_value());
    ASSERT_EQ(r.problem.baseline->kind, "unfused_dual_gemm_silu");
    r.timing.max_seconds = 0.3;
    r.tolerance = baseline_check_tolerance(family().tolerance.at(dtype));  // as a job checks it
    std::string reason;
    const auto answer = client_->time_baseline(r, 120s, &reason);
    ASSERT_TRUE(answer) << dtype << ": " << reason;
    // Checked element by element against the reference kernel before it was timed.
    ASSERT_TRUE(answer->error.has_value());
    EXPECT_EQ(answer->error->bad_elements, 0) << dtype;
    EXPECT_EQ(answer->error->non_finite, 0) << dtype;
    EXPECT_TRUE(answer->error->guard_damage.empty()) << dtype;
    const nlohmann::json& b = answer->baseline;
    EXPECT_EQ(b.value("kind", ""), "unfused_dual_gemm_silu") << b.dump();
    EXPECT_EQ(b.value("workspace_limit_bytes", 0), 32 << 20);
    const int algorithms = b.value("heuristic_algorithms", 0);
    EXPECT_GE(algorithms, 1);
    EXPECT_EQ(b.at("gate_selection").size(), static_cast<std::size_t>(algorithms));
    EXPECT_GT(answer->timing.median_us, 1.0);
    EXPECT_LT(answer->timing.median_us, 5000.0);
    std::printf("[baseline] unfused %s on %s: %.2f us (%s)\n", dtype.c_str(),
                canonical_key(shape).c_str(), answer->timing.median_us,
                b.at("gate_algorithm").dump().c_str());

    // The job's choice, given back for its final comparison, is used as is.
    r.problem.baseline->params["gate_algorithm_index"] = algorithms - 1;
    r.problem.baseline->params["up_algorithm_index"] = 0;
    const auto again = client_->time_baseline(r, 120s, &reason);
    ASSERT_TRUE(again) << reason;
    EXPECT_EQ(again->baseline.value("gate_algorithm_index", -1), algorithms - 1);
    EXPECT_EQ(again->baseline.value("up_algorithm_index", -1), 0);
  }
}

TEST_F(DualGemmWgmma, FinalComparisonTimesTheUnfusedBaselineInterleaved) {
  const Shape shape = dual_shape(2, 256, 512, 1024);
  const std::vector<Config> found = configs(shape, "bf16", 2);
  ASSERT_FALSE(found.empty());
  std::vector<test::FamilyCase> cases;
  for (const Config& c : found) cases.push_back({"bf16", shape, c});
  compile_all(cases);
  InterleavedRequest r;
  for (const auto& c : cases) r.candidates.push_back(request(c, true));
  r.baseline = problem(found.front(), shape, "bf16");
  r.timing.max_seconds = 0.5;
  const InterleavedResult result = client_->measure_interleaved(r);
  ASSERT_TRUE(result.baseline_timing.has_value()) << result.reason;
  EXPECT_EQ(result.baseline.value("kind", ""), "unfused_dual_gemm_silu");
  ASSERT_EQ(result.speedups.size(), cases.size());
  for (const auto& s : result.speedups) {
    EXPECT_GT(s.value, 0.0);
    std::printf("[final] speedup over unfused %.3f [%.3f, %.3f]\n", s.value, s.low, s.high);
  }
}

}  // namespace
}  // namespace kt
