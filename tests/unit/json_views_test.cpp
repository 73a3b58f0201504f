// The API's JSON for stored records (server/json_views.cpp): the measurement's method and
// clocks on a variant, the interleaved winner comparison on a job.
#include "server/json_views.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

VariantRecord measured_variant(int sm_clock_mhz, std::uint64_t reasons) {
  VariantRecord v;
  v.id = 4;
  v.status = VariantStatus::measured;
  TimingSummary t;
  t.median_us = 3.1;
  t.method = "graph";
  t.launches_per_sample = 17;
  t.discarded_samples = 2;
  t.sm_clock_mhz = sm_clock_mhz;
  t.throttle_reasons = reasons;
  v.timing = t;
  return v;
}

TEST(JsonViews, VariantTimingShowsMethodDiscardsAndNamedThrottleReasons) {
  const nlohmann::json j = variant_to_json(measured_variant(1980, 0x4 | 0x1));
  const nlohmann::json& timing = j.at("timing");
  EXPECT_EQ(timing.at("method"), "graph");
  EXPECT_EQ(timing.at("launches_per_sample"), 17);
  EXPECT_EQ(timing.at("discarded_samples"), 2);
  EXPECT_EQ(timing.at("sm_clock_mhz"), 1980);
  EXPECT_EQ(timing.at("throttle_reasons"), 5);
  EXPECT_EQ(timing.at("throttle_reason_names"), nlohmann::json({"gpu_idle", "sw_power_cap"}));
}

TEST(JsonViews, WithoutNvmlClockAndReasonsAreNull) {
  const nlohmann::json timing = variant_to_json(measured_variant(-1, 0)).at("timing");
  EXPECT_TRUE(timing.at("sm_clock_mhz").is_null());
  EXPECT_TRUE(timing.at("throttle_reasons").is_null());
  EXPECT_TRUE(timing.at("throttle_reason_names").is_null());
  EXPECT_EQ(timing.at("method"), "graph");
}

TEST(JsonViews, JobComparisonIsNullUntilStoredThenComplete) {
  JobRecord job;
  job.id = 1;
  EXPECT_TRUE(job_to_json(job).at("comparison").is_null());

  job.winner_variant_id = 11;
  job.runner_up_variant_id = 12;
  job.winner_distinguishable = true;
  job.winner_margin = 0.031;
  job.winner_median_us = 100.0;
  job.runner_up_median_us = 103.2;
  const nlohmann::json c = job_to_json(job).at("comparison");
  EXPECT_EQ(c.at("winner_variant_id"), 11);
  EXPECT_EQ(c.at("runner_up_variant_id"), 12);
  EXPECT_EQ(c.at("distinguishable"), true);
  EXPECT_DOUBLE_EQ(c.at("margin").get<double>(), 0.031);
  EXPECT_DOUBLE_EQ(c.at("winner_median_us").get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(c.at("runner_up_median_us").get<double>(), 103.2);

  job.runner_up_variant_id.reset();  // a lone candidate
  job.winner_distinguishable.reset();
  job.winner_margin.reset();
  job.runner_up_median_us.reset();
  const nlohmann::json alone = job_to_json(job).at("comparison");
  EXPECT_EQ(alone.at("winner_variant_id"), 11);
  EXPECT_TRUE(alone.at("runner_up_variant_id").is_null());
  EXPECT_TRUE(alone.at("distinguishable").is_null());
}

}  // namespace
}  // namespace kt
