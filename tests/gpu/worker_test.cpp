// The measurement worker on a real GPU, through the daemon's client: small GEMM kernels compiled
// here with NVRTC (argument order C, A, B, M, N, K like the GEMM family) that are right, wrong,
// fault, hang or ask for too much, and the state each one must end in.
#include <chrono>

#include <gtest/gtest.h>

#include "support/gpu_fixture.hpp"
#include "support/naive_gemm.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

using test::naive_gemm_problem;
using test::NaiveGemm;

// Needs no GPU: every planted behaviour compiles, for both dtypes.
TEST(WorkerTestKernels, CompileWithNvrtc) {
  for (const NaiveGemm behaviour : test::kAllNaiveGemms) {
    for (const char* dtype : {"bf16", "fp16"}) {
      CompileRequest request = test::naive_gemm_compile(behaviour, dtype);
      request.arch = "sm_90a";
      const CompileResult compiled = compile_kernel(request);
      EXPECT_TRUE(compiled.ok) << static_cast<int>(behaviour) << " " << dtype << ":\n"
                               << compiled.log;
    }
  }
}

class WorkerOnGpu : public test::WorkerGpuTest {
 protected:
  MeasureRequest request(NaiveGemm behaviour, const std::string& dtype = "bf16") {
    MeasureRequest r;
    r.variant_id = static_cast<int>(behaviour) + 1;
    r.cubin_path = write_cubin(test::naive_gemm_compile(behaviour, dtype),
                               "gemm_" + std::to_string(static_cast<int>(behaviour)) + "_" + dtype);
    r.kernel = test::kNaiveGemmKernel;
    r.smoke = naive_gemm_problem(67, 45, 40, dtype);  // ragged: not a multiple of the 16x16 tile
    r.full = naive_gemm_problem(257, 193, 136, dtype);
    r.tolerance = test::naive_gemm_tolerance(dtype);
    r.seed = 1234;
    r.timing.warmup_runs = 2;
    r.timing.min_trials = 10;
    r.timing.max_trials = 200;
    r.timing.max_seconds = 1.0;
    return r;
  }
};

TEST_F(WorkerOnGpu, ProbeDescribesTheDevice) {
  EXPECT_TRUE(probe().driver_found);
  EXPECT_GT(device_.sm_count, 0);
  EXPECT_GT(device_.l2_bytes, 0);
  EXPECT_GT(device_.smem_per_block_optin, 48 * 1024);
  EXPECT_GE(device_.driver_version, 12000);
  EXPECT_EQ(device_.uuid.rfind("GPU-", 0), 0u);
}

TEST_F(WorkerOnGpu, CorrectKernelIsMeasuredWithTiming) {
  for (const std::string dtype : {"bf16", "fp16"}) {
    const MeasureResult r = client_->measure(request(NaiveGemm::correct, dtype), 60s);
    ASSERT_EQ(r.status, VariantStatus::measured)
        << dtype << ": " << r.failed_gate << ": " << r.reason;
    ASSERT_TRUE(r.timing.has_value());
    EXPECT_GE(r.timing->trials, 10);
    EXPECT_GT(r.timing->median_us, 0);
    EXPECT_LE(r.timing->min_us, r.timing->median_us);
    EXPECT_LE(r.timing->p10_us, r.timing->median_us);
    EXPECT_GE(r.timing->p90_us, r.timing->median_us);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->non_finite, 0);
    EXPECT_EQ(r.error->bad_elements, 0);
    EXPECT_EQ(r.error->first_bad_index, -1);
    EXPECT_TRUE(r.error->guard_damage.empty()) << r.error->guard_damage;
    ASSERT_TRUE(r.error->tolerance.has_value());  // stored with the result: what "correct" meant
    EXPECT_EQ(*r.error->tolerance, test::naive_gemm_tolerance(dtype));
    EXPECT_GT(r.error->rel_l2, 0);  // the 16-bit rounding, well inside the bound
    EXPECT_LT(r.error->rel_l2, test::naive_gemm_tolerance(dtype).max_rel_l2 / 2);
    EXPECT_GT(r.registers, 0);
  }
  EXPECT_EQ(client_->starts(), 1);
}

TEST_F(WorkerOnGpu, ZeroOutputIsAWrongResultAtTheSmokeGate) {
  const MeasureResult r = client_->measure(request(NaiveGemm::writes_zero), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  EXPECT_EQ(r.failed_gate, "smoke");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NEAR(r.error->rel_l2, 1.0, 1e-6);
  EXPECT_FALSE(r.timing.has_value());
}

TEST_F(WorkerOnGpu, UnwrittenLastRowLeavesPoisonAndIsAWrongResult) {
  const MeasureResult r = client_->measure(request(NaiveGemm::skips_last_row), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->non_finite, 45);  // the smoke instance's last row of C
  EXPECT_EQ(r.error->first_bad_index, 66 * 45);
}

// The smoke instance is 67 x 45 x 40: C[33][22] is element 1507, the tile of block (1, 1) starts
// at row 16, column 16 (element 736), C[0][44] is element 44.
TEST_F(WorkerOnGpu, OneWrongElementIsAWrongResult) {
  for (const std::string dtype : {"bf16", "fp16"}) {
    const MeasureResult r = client_->measure(request(NaiveGemm::one_wrong_element, dtype), 60s);
    EXPECT_EQ(r.status, VariantStatus::wrong_result) << dtype << ": " << r.reason;
    EXPECT_EQ(r.failed_gate, "smoke");
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->bad_elements, 1);
    EXPECT_EQ(r.error->non_finite, 0);
    EXPECT_EQ(r.error->first_bad_index, 1507);
    EXPECT_NEAR(r.error->first_bad_output - r.error->first_bad_reference, 1.0, 0.07);
    EXPECT_NE(r.reason.find("1 bad element (0 non-finite)"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("first at 1507"), std::string::npos) << r.reason;
    EXPECT_FALSE(r.timing.has_value());
  }
}

TEST_F(WorkerOnGpu, OneWrongTileIsAWrongResult) {
  const MeasureResult r = client_->measure(request(NaiveGemm::one_wrong_tile), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  EXPECT_EQ(r.failed_gate, "smoke");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->bad_elements, 256);
  EXPECT_EQ(r.error->first_bad_index, 16 * 45 + 16);
  EXPECT_NE(r.reason.find("256 bad elements"), std::string::npos) << r.reason;
}

TEST_F(WorkerOnGpu, OneNanIsAWrongResult) {
  const MeasureResult r = client_->measure(request(NaiveGemm::one_nan), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  EXPECT_EQ(r.failed_gate, "smoke");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->non_finite, 1);
  EXPECT_EQ(r.error->bad_elements, 1);
  EXPECT_EQ(r.error->first_bad_index, 44);
  EXPECT_NE(r.reason.find("1 bad element (1 non-finite)"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("got nan"), std::string::npos) << r.reason;
}

// C itself is right: only the guard after it says the kernel wrote one element too many.
TEST_F(WorkerOnGpu, WritingOnePastTheEndOfCIsAWrongResult) {
  const MeasureResult r = client_->measure(request(NaiveGemm::writes_one_past_end), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  EXPECT_EQ(r.failed_gate, "smoke");
  EXPECT_EQ(r.reason.rfind("wrote past the end of C: guard after C damaged at byte 0", 0), 0u)
      << r.reason;
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->bad_elements, 0);
  EXPECT_EQ(r.error->guard_damage,
            "wrote past the end of C: guard after C damaged at byte 0 (2 of 4096 guard bytes "
            "changed)");
  EXPECT_FALSE(r.timing.has_value());
  EXPECT_EQ(client_->starts(), 1);  // caught by the guard, not by a crash
}

// The bound's magnitude term (tuner/error_bound.hpp): a split-K whose partial sums and their
// reduction are rounded to 16 bits is correct at K = 16384 with odd extents (the bound without
// the term rejects it in bf16, as it rejected cuBLASLt's split-K algorithm), and the reference's
// |A| |B|^T is what the stored summary says it was checked with.
TEST_F(WorkerOnGpu, SplitKWith16BitPartialSumsIsMeasuredAtK16384) {
  for (const std::string dtype : {"bf16", "fp16"}) {
    MeasureRequest r = request(NaiveGemm::split_k_16bit, dtype);
    r.full = naive_gemm_problem(129, 97, 16384, dtype);
    const MeasureResult measured = client_->measure(r, 120s);
    EXPECT_EQ(measured.status, VariantStatus::measured)
        << dtype << ": " << measured.failed_gate << ": " << measured.reason;
    ASSERT_TRUE(measured.error.has_value());
    ASSERT_TRUE(measured.error->magnitude_bound.has_value()) << dtype;
    EXPECT_EQ(measured.error->magnitude_bound->reduction, 16384);
    EXPECT_EQ(measured.error->magnitude_bound->magnitude, "|A|*|B|^T");
    EXPECT_EQ(measured.error->magnitude_bound->c, 16);
    EXPECT_GT(measured.error->max_bound_fraction, 0);
    EXPECT_LT(measured.error->max_bound_fraction, 1);

    if (dtype != "bf16") continue;
    r.tolerance.magnitude = 0;  // the bound before the term, judged on the full K = 16384 alone
    r.smoke.reset();
    const MeasureResult old = client_->measure(r, 120s);
    EXPECT_EQ(old.status, VariantStatus::wrong_result) << old.reason;
    EXPECT_EQ(old.failed_gate, "full");
  }
}

TEST_F(WorkerOnGpu, ATileThatDroppedAKBlockIsAWrongResultAtEveryK) {
  for (const int k : {64, 1024, 16384}) {
    for (const std::string dtype : {"bf16", "fp16"}) {
      MeasureRequest r = request(NaiveGemm::drops_k_block, dtype);
      r.smoke.reset();
      r.full = naive_gemm_problem(67, 45, k, dtype);
      r.time = false;
      const MeasureResult measured = client_->measure(r, 120s);
      EXPECT_EQ(measured.status, VariantStatus::wrong_result)
          << "K " << k << " " << dtype << ": " << measured.reason;
      ASSERT_TRUE(measured.error.has_value());
      EXPECT_GT(measured.error->bad_elements, 0);
      EXPECT_GE(measured.error->first_bad_index, 16 * 45 + 16) << "inside the tile of block (1, 1)";
      EXPECT_NE(measured.reason.find("16 * u * m (m = |A|*|B|^T"), std::string::npos)
          << measured.reason;
    }
  }
}

TEST_F(WorkerOnGpu, FarOutOfBoundsWriteIsIllegalAccessAndTheNextVariantStillRuns) {
  const MeasureResult bad = client_->measure(request(NaiveGemm::far_out_of_bounds), 60s);
  EXPECT_EQ(bad.status, VariantStatus::illegal_access) << bad.reason;
  const MeasureResult good = client_->measure(request(NaiveGemm::correct), 60s);
  EXPECT_EQ(good.status, VariantStatus::measured) << good.reason;
  EXPECT_EQ(client_->starts(), 2);  // a fresh worker after the lost context
}

TEST_F(WorkerOnGpu, EndlessLoopIsAHangAndTheNextVariantStillRuns) {
  ASSERT_EQ(client_->measure(request(NaiveGemm::correct), 60s).status, VariantStatus::measured);
  const auto begin = std::chrono::steady_clock::now();
  const MeasureResult hung = client_->measure(request(NaiveGemm::loops_forever), 3s);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 30s);
  EXPECT_EQ(hung.status, VariantStatus::hang) << hung.reason;
  const MeasureResult good = client_->measure(request(NaiveGemm::correct), 60s);
  EXPECT_EQ(good.status, VariantStatus::measured) << good.reason;
  EXPECT_EQ(client_->starts(), 2);
}

TEST_F(WorkerOnGpu, TooManyThreadsOrTooMuchSharedMemoryIsResourceExceeded) {
  MeasureRequest r = request(NaiveGemm::correct);
  r.full.launch.block = {64, 32, 1};  // 2048 threads
  MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::resource_exceeded) << result.reason;
  EXPECT_EQ(result.failed_gate, "resources");

  r = request(NaiveGemm::correct);
  r.full.launch.dynamic_smem = static_cast<std::uint32_t>(device_.smem_per_block_optin + 1024);
  result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::resource_exceeded) << result.reason;
  EXPECT_EQ(client_->starts(), 1);
}

TEST_F(WorkerOnGpu, MissingKernelOrCubinIsALaunchFailureAtLoad) {
  MeasureRequest r = request(NaiveGemm::correct);
  r.kernel = "no_such_kernel";
  MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed) << result.reason;
  EXPECT_EQ(result.failed_gate, "load");
  r = request(NaiveGemm::correct);
  r.cubin_path = (dir_.path() / "missing.cubin").string();
  result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed);
  EXPECT_EQ(result.failed_gate, "load");
}

TEST_F(WorkerOnGpu, ClusterLaunchOfAnInvalidShapeIsALaunchFailure) {
  if (device_.sm_major < 9) GTEST_SKIP() << "thread-block clusters need sm_90+";
  MeasureRequest r = request(NaiveGemm::correct);
  r.smoke.reset();
  r.full.launch.cluster = {3, 1, 1};  // grid.x (13) is not a multiple of 3
  const MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed) << result.reason;
  EXPECT_EQ(result.failed_gate, "full");
}

TEST_F(WorkerOnGpu, WithoutABaselineTheReferenceRunIsTimedInItsPlace) {
  BaselineTimingRequest r;
  r.problem = naive_gemm_problem(1024, 1024, 1024, "bf16");
  r.timing.min_trials = 10;
  r.timing.max_seconds = 1.0;
  std::string reason;
  const auto baseline = client_->time_baseline(r, 60s, &reason);
  ASSERT_TRUE(baseline.has_value()) << reason;
  EXPECT_EQ(baseline->baseline.value("kind", ""), "cublas_gemm");
  const TimingSummary* timing = &baseline->timing;
  EXPECT_GE(timing->trials, 10);
  EXPECT_GT(timing->median_us, 0.5);  // 2 GFLOP takes longer than that on any GPU
}

}  // namespace
}  // namespace kt
