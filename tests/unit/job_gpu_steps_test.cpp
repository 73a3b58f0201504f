#include "engine/job_gpu_steps.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "support/test_paths.hpp"

namespace kt {
namespace {

VariantRecord variant(std::int64_t id, VariantStatus status, std::optional<double> median_us) {
  VariantRecord v;
  v.id = id;
  v.status = status;
  if (median_us) {
    TimingSummary t;
    t.median_us = *median_us;
    v.timing = t;
  }
  return v;
}

std::vector<std::int64_t> ids(const std::vector<VariantRecord>& variants) {
  std::vector<std::int64_t> out;
  for (const auto& v : variants) out.push_back(v.id);
  return out;
}

TEST(NearTieCandidates, FastestMeasuredFirstTiesByIdOthersLeftOut) {
  const std::vector<VariantRecord> all{variant(1, VariantStatus::measured, 30),
                                       variant(2, VariantStatus::wrong_result, 1),
                                       variant(3, VariantStatus::measured, 10),
                                       variant(4, VariantStatus::measured, 20),
                                       variant(5, VariantStatus::measured, 10),
                                       variant(6, VariantStatus::hang, std::nullopt),
                                       variant(7, VariantStatus::measured, std::nullopt)};
  EXPECT_EQ(ids(final_candidates(all, 3)), (std::vector<std::int64_t>{3, 5, 4}));
  EXPECT_EQ(ids(final_candidates(all, 10)), (std::vector<std::int64_t>{3, 5, 4, 1}));
  EXPECT_TRUE(final_candidates({variant(2, VariantStatus::wrong_result, 1)}, 3).empty());
}

TEST(MeasureRequest, CarriesTheJobReferenceAndASeedPerVariant) {
  test::TempDir dir;
  SchedulerOptions options;
  options.work_dir = dir.path() / "work";
  options.timing.max_trials = 77;
  JobRecord job;
  job.reference_us = 42.5;
  CompiledVariant cv;
  cv.variant_id = 9;
  cv.kernel = "k";
  cv.kernel_key = "abc";
  cv.cubin = {'\x7f', 'E', 'L', 'F'};
  const Tolerance tolerance{0.03125, 0.0009765625, 0.001};
  const MeasureRequest request = measure_request(cv, job, tolerance, options, 1234);
  EXPECT_EQ(request.variant_id, 9);
  EXPECT_DOUBLE_EQ(request.reference_us, 42.5);
  EXPECT_EQ(request.tolerance, tolerance);
  EXPECT_EQ(request.timing.max_trials, 77);
  EXPECT_EQ(request.seed, mix_seed(1234, 9));
  EXPECT_NE(mix_seed(1234, 9), mix_seed(1234, 10));
  std::ifstream cubin(request.cubin_path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(cubin), {}),
            "\x7f"
            "ELF");
  // Unknown reference: 0, and the worker client falls back to the fixed watchdog.
  job.reference_us.reset();
  EXPECT_EQ(measure_request(cv, job, tolerance, options, 1234).reference_us, 0);
  EXPECT_EQ(fallback_watchdog(options), options.min_watchdog + std::chrono::milliseconds(6000));
}

TEST(OutcomeOf, ThroughputAndSpeedupOnlyForMeasuredVariants) {
  ProblemInstance problem;
  problem.flops = 2e12;
  problem.bytes = 1e9;
  MeasureResult result;
  result.status = VariantStatus::measured;
  TimingSummary t;
  t.median_us = 1e6;  // one second
  result.timing = t;
  VariantOutcome outcome = outcome_of(result, problem, 5e5);
  EXPECT_DOUBLE_EQ(outcome.tflops, 2.0);
  EXPECT_DOUBLE_EQ(outcome.gbps, 1.0);
  EXPECT_DOUBLE_EQ(*outcome.speedup, 0.5);
  result.status = VariantStatus::wrong_result;
  result.reason = "off";
  outcome = outcome_of(result, problem, 5e5);
  EXPECT_EQ(outcome.tflops, 0);
  EXPECT_FALSE(outcome.speedup.has_value());
  EXPECT_EQ(outcome.reason, "off");
}

}  // namespace
}  // namespace kt
