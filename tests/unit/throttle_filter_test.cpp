#include "worker/throttle_filter.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace kt {
namespace {

ClockReading reading(int mhz, std::uint64_t reasons) {
  return {.valid = true, .sm_clock_mhz = mhz, .reasons = reasons};
}

TEST(ThrottleReasons, OnlyPowerThermalSlowdownAndSyncBoostDistort) {
  EXPECT_FALSE(distorts_timing(0));
  EXPECT_FALSE(distorts_timing(clock_event::gpu_idle));
  EXPECT_FALSE(distorts_timing(clock_event::applications_clocks));
  EXPECT_FALSE(distorts_timing(clock_event::display_clocks));
  EXPECT_FALSE(distorts_timing(clock_event::gpu_idle | clock_event::applications_clocks));
  for (std::uint64_t bit :
       {clock_event::sw_power_cap, clock_event::hw_slowdown, clock_event::sync_boost,
        clock_event::sw_thermal, clock_event::hw_thermal, clock_event::hw_power_brake})
    EXPECT_TRUE(distorts_timing(bit | clock_event::gpu_idle)) << bit;
}

TEST(ThrottleReasons, NvmlBitValues) {
  // nvml.h's nvmlClocksEventReason* values: a typo here would silently keep throttled samples.
  EXPECT_EQ(clock_event::sw_power_cap, 0x4u);
  EXPECT_EQ(clock_event::hw_slowdown, 0x8u);
  EXPECT_EQ(clock_event::sync_boost, 0x10u);
  EXPECT_EQ(clock_event::sw_thermal, 0x20u);
  EXPECT_EQ(clock_event::hw_thermal, 0x40u);
  EXPECT_EQ(clock_event::hw_power_brake, 0x80u);
}

TEST(ThrottleReasons, NamesForTheView) {
  EXPECT_TRUE(clock_event_names(0).empty());
  EXPECT_EQ(clock_event_names(clock_event::sw_power_cap | clock_event::hw_thermal),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
  EXPECT_EQ(clock_event_names(std::uint64_t{1} << 40), (std::vector<std::string>{"bit_40"}));
}

TEST(KeepSample, EitherSideThrottledDropsIt) {
  const ClockReading calm = reading(1980, clock_event::gpu_idle);
  const ClockReading capped = reading(1500, clock_event::sw_power_cap);
  EXPECT_TRUE(keep_sample(calm, calm));
  EXPECT_FALSE(keep_sample(capped, calm));
  EXPECT_FALSE(keep_sample(calm, capped));
  // Without NVML (invalid readings) every sample is kept.
  EXPECT_TRUE(keep_sample(ClockReading{}, ClockReading{}));
  // An invalid reading carries no verdict, a valid one still does.
  EXPECT_FALSE(keep_sample(ClockReading{}, capped));
}

TEST(ThrottleFilter, DropsThrottledSamplesCountsThemAndReportsTheClock) {
  ThrottleFilter filter;
  // Readings r0..r5 between samples s1..s5; r2 is thermally throttled: s2 and s3 touch it.
  const std::vector<ClockReading> r = {
      reading(1980, 0), reading(1980, 0), reading(1400, clock_event::hw_thermal),
      reading(1965, 0), reading(1980, 0), reading(1995, clock_event::gpu_idle)};
  const std::vector<double> samples = {10.0, 10.2, 14.0, 10.1, 10.3};
  std::vector<bool> kept;
  for (std::size_t i = 0; i < samples.size(); ++i)
    kept.push_back(filter.add(samples[i], r[i], r[i + 1]));
  EXPECT_EQ(kept, (std::vector<bool>{true, false, false, true, true}));
  EXPECT_EQ(filter.kept(), (std::vector<double>{10.0, 10.1, 10.3}));
  EXPECT_EQ(filter.discarded(), 2);
  EXPECT_EQ(filter.attempts(), 5);
  TimingSummary summary;
  filter.annotate(summary);
  EXPECT_EQ(summary.discarded_samples, 2);
  EXPECT_EQ(summary.throttle_reasons, clock_event::hw_thermal | clock_event::gpu_idle);
  // Clocks after the kept samples: 1980, 1980, 1995 -> median 1980 (the throttled 1400 is not).
  EXPECT_EQ(summary.sm_clock_mhz, 1980);
  const auto summarized = filter.samples_to_summarize();
  EXPECT_EQ(std::vector<double>(summarized.begin(), summarized.end()), filter.kept());
}

TEST(ThrottleFilter, WithoutNvmlKeepsEverythingAndKnowsNoClock) {
  ThrottleFilter filter;
  for (double s : {5.0, 6.0, 7.0}) EXPECT_TRUE(filter.add(s, ClockReading{}, ClockReading{}));
  TimingSummary summary;
  filter.annotate(summary);
  EXPECT_EQ(summary.discarded_samples, 0);
  EXPECT_EQ(summary.sm_clock_mhz, -1);
  EXPECT_EQ(summary.throttle_reasons, 0u);
}

TEST(ThrottleFilter, WhenEverySampleIsThrottledTheyAreSummarizedAndCounted) {
  ThrottleFilter filter;
  const ClockReading capped = reading(1600, clock_event::sw_power_cap);
  for (double s : {20.0, 21.0, 22.0}) EXPECT_FALSE(filter.add(s, capped, capped));
  EXPECT_TRUE(filter.kept().empty());
  EXPECT_EQ(filter.samples_to_summarize().size(), 3u);
  TimingSummary summary;
  filter.annotate(summary);
  EXPECT_EQ(summary.discarded_samples, 3);
  EXPECT_EQ(summary.sm_clock_mhz, 1600);
  EXPECT_EQ(summary.throttle_reasons, clock_event::sw_power_cap);
  filter.clear();
  EXPECT_EQ(filter.attempts(), 0);
}

}  // namespace
}  // namespace kt
