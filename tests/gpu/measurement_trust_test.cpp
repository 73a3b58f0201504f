// Trustworthy timing on a real GPU, through the daemon's worker client: short kernels are timed
// as CUDA graphs, NVML readings come with every measurement, top candidates are
// re-measured interleaved, and the hang watchdog follows the reference time. Skipped without a device.
#include <dlfcn.h>

#include <chrono>

#include <gtest/gtest.h>

#include "support/gpu_fixture.hpp"
#include "support/naive_gemm.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

bool nvml_present() {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

class MeasurementOnGpu : public test::WorkerGpuTest {
 protected:
  MeasureRequest request(std::int64_t id, int m, int n, int k, bool hang = false) {
    MeasureRequest r;
    r.variant_id = id;
    r.cubin_path = write_cubin(
        test::naive_gemm_compile(hang ? test::NaiveGemm::loops_forever : test::NaiveGemm::correct),
        hang ? "hang" : "gemm");
    r.kernel = test::kNaiveGemmKernel;
    r.full = test::naive_gemm_problem(m, n, k);
    r.tolerance = test::naive_gemm_tolerance();
    r.seed = 99;
    r.timing.warmup_runs = 2;
    r.timing.min_trials = 10;
    r.timing.max_trials = 300;
    r.timing.max_seconds = 1.0;
    return r;
  }
};

TEST_F(MeasurementOnGpu, ATinyKernelIsTimedAsAGraphWithASanePerLaunchTime) {
  MeasureRequest r = request(1, 64, 64, 32);  // a microsecond or two: launch-bound
  const MeasureResult graph = client_->measure(r, 60s);
  ASSERT_EQ(graph.status, VariantStatus::measured) << graph.failed_gate << ": " << graph.reason;
  ASSERT_TRUE(graph.timing);
  EXPECT_EQ(graph.timing->method, "graph");
  EXPECT_GE(graph.timing->launches_per_sample, 5);  // >= 50 us of < 10 us launches
  EXPECT_GT(graph.timing->median_us, 0.05);
  EXPECT_LT(graph.timing->median_us, 10.0);
  EXPECT_GE(graph.timing->trials, 10);
  EXPECT_LE(graph.timing->trials, 300);
  EXPECT_LE(graph.timing->min_us, graph.timing->median_us);
  EXPECT_LE(graph.timing->median_us, graph.timing->p90_us);

  r.timing.graph_below_us = 0;  // graphs off: one launch between events
  const MeasureResult events = client_->measure(r, 60s);
  ASSERT_EQ(events.status, VariantStatus::measured) << events.reason;
  EXPECT_EQ(events.timing->method, "events");
  EXPECT_EQ(events.timing->launches_per_sample, 1);
  EXPECT_LE(events.timing->min_us, events.timing->median_us);
  EXPECT_LE(events.timing->median_us, events.timing->p90_us);
  // Per launch, back-to-back graph launches cannot be much slower than isolated launches.
  EXPECT_LT(graph.timing->median_us, 1.5 * events.timing->median_us)
      << "graph " << graph.timing->median_us << " us vs events " << events.timing->median_us;
}

TEST_F(MeasurementOnGpu, ALongKernelStaysOnEvents) {
  const MeasureResult r = client_->measure(request(2, 1024, 1024, 1024), 120s);
  ASSERT_EQ(r.status, VariantStatus::measured) << r.reason;
  EXPECT_EQ(r.timing->method, "events");
  EXPECT_EQ(r.timing->launches_per_sample, 1);
  EXPECT_GT(r.timing->median_us, 10.0);
}

TEST_F(MeasurementOnGpu, NvmlReadingsComeWithEveryMeasurement) {
  if (!nvml_present()) GTEST_SKIP() << "libnvidia-ml.so.1 is not installed on this host";
  const MeasureResult r = client_->measure(request(3, 512, 512, 512), 60s);
  ASSERT_EQ(r.status, VariantStatus::measured) << r.reason;
  EXPECT_GT(r.timing->sm_clock_mhz, 100) << "no SM clock from NVML";
  EXPECT_LT(r.timing->sm_clock_mhz, 5000);
  const TimingSummary& t = *r.timing;
  EXPECT_GE(t.trials, 10);
  EXPECT_LE(t.trials, 300);
  // A run stops after 2 x max_trials attempts, kept and dropped together.
  EXPECT_LE(t.trials + t.discarded_samples, 2 * 300);
  // A sample is dropped only while NVML reports a clock event that distorts timing.
  if (t.discarded_samples > 0) {
    EXPECT_NE(t.throttle_reasons, 0u) << t.discarded_samples << " samples dropped for no reason";
  }
  EXPECT_LE(t.min_us, t.median_us);
  EXPECT_LE(t.median_us, t.p90_us);

  BaselineTimingRequest reference;
  reference.problem = test::naive_gemm_problem(1024, 1024, 1024);
  reference.timing.max_seconds = 0.5;
  std::string reason;
  const auto baseline = client_->time_baseline(reference, 60s, &reason);
  ASSERT_TRUE(baseline) << reason;
  const TimingSummary* timing = &baseline->timing;
  EXPECT_GT(timing->sm_clock_mhz, 100);
}

TEST_F(MeasurementOnGpu, InterleavedReMeasureOfTwoVariantsReturnsBoth) {
  InterleavedRequest interleaved;
  interleaved.candidates = {request(10, 512, 512, 512), request(20, 256, 256, 256)};
  interleaved.timing = interleaved.candidates[0].timing;
  const InterleavedResult r = client_->measure_interleaved(interleaved);
  ASSERT_EQ(r.variant_ids, (std::vector<std::int64_t>{10, 20}));
  ASSERT_EQ(r.timings.size(), 2u);
  for (const TimingSummary& t : r.timings) {
    EXPECT_GE(t.trials, 10);
    EXPECT_GT(t.median_us, 0);
    EXPECT_LE(t.p10_us, t.median_us);
  }
  // 8x fewer FLOPs: the small problem wins, far beyond the noise.
  EXPECT_EQ(r.winner_variant_id, 20);
  EXPECT_EQ(r.runner_up_variant_id, 10);
  EXPECT_TRUE(r.distinguishable) << r.reason;
  EXPECT_GT(r.margin, 1.0) << r.reason;
  EXPECT_NEAR(r.margin, r.timings[0].median_us / r.timings[1].median_us - 1, 1e-9);
  EXPECT_EQ(client_->starts(), 1);

  // The same variant twice is a tie within the noise.
  interleaved.candidates = {request(30, 512, 512, 512), request(31, 512, 512, 512)};
  const InterleavedResult tie = client_->measure_interleaved(interleaved);
  EXPECT_LT(tie.margin, 0.05) << tie.reason;
}

TEST_F(MeasurementOnGpu, TheHangWatchdogFollowsTheReferenceTime) {
  MeasureRequest r = request(40, 256, 256, 256, /*hang=*/true);
  r.reference_us = 20;  // -> ~12 s: 10 s allowance + 50x the reference per launch + trials
  const auto begin = std::chrono::steady_clock::now();
  const MeasureResult hung = client_->measure(r, 600s);  // the fallback is not what applies
  const auto waited = std::chrono::steady_clock::now() - begin;
  EXPECT_EQ(hung.status, VariantStatus::hang) << hung.reason;
  EXPECT_LT(waited, 60s);
  EXPECT_GT(waited, 9s);
  const MeasureResult good = client_->measure(request(41, 64, 64, 32), 60s);
  EXPECT_EQ(good.status, VariantStatus::measured) << good.reason;
}

}  // namespace
}  // namespace kt
