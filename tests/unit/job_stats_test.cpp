#include "engine/job_stats.hpp"

#include <thread>

#include <gtest/gtest.h>

namespace kt {
namespace {

JobProgress progress(std::map<std::string, std::int64_t> by_status) {
  JobProgress p;
  p.by_status = std::move(by_status);
  for (const auto& [status, count] : p.by_status) {
    p.total += count;
    if (status != "pending") p.finished += count;
  }
  return p;
}

TEST(JobStats, MedianOfOddEvenAndEmpty) {
  EXPECT_EQ(median_of({3, 1, 2}), 2.0);
  EXPECT_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median_of({7}), 7.0);
  EXPECT_FALSE(median_of({}).has_value());
}

TEST(JobStats, RatesCountOnlyVariantsThatWentThroughTheGates) {
  JobStatsInput in;
  in.wall_seconds = 30;
  in.gpu_busy_seconds = 45;
  in.gpus = 2;
  in.progress = progress({{"pruned", 1000},
                          {"unsupported_arch", 1},
                          {"measured", 50},
                          {"wrong_result", 5},
                          {"compile_error", 5},
                          {"cancelled", 7},
                          {"pending", 3}});
  in.compile_ms = {1000, 3000, 2000, 4000};
  const JobStats stats = compute_job_stats(in);
  EXPECT_EQ(stats.variants_finished, 60);
  EXPECT_EQ(stats.variants_measured, 50);
  EXPECT_DOUBLE_EQ(*stats.variants_per_minute, 120.0);  // 60 in half a minute
  EXPECT_EQ(stats.compiled, 4);
  EXPECT_DOUBLE_EQ(*stats.compile_seconds_median, 2.5);
  EXPECT_DOUBLE_EQ(*stats.compile_seconds_total, 10.0);
  EXPECT_DOUBLE_EQ(*stats.gpu_busy_seconds, 45.0);
  EXPECT_DOUBLE_EQ(*stats.gpu_idle_fraction, 0.25);  // 1 - 45 / (30 * 2)
}

TEST(JobStats, UnknownFiguresStayNull) {
  JobStatsInput in;  // a queued job: nothing known
  in.progress = progress({{"pending", 10}});
  const JobStats stats = compute_job_stats(in);
  EXPECT_EQ(stats.variants_finished, 0);
  const nlohmann::json j = to_json(stats);
  for (const char* key : {"wall_seconds", "variants_per_minute", "compile_seconds_median",
                          "compile_seconds_total", "gpu_busy_seconds", "gpu_idle_fraction"})
    EXPECT_TRUE(j.at(key).is_null()) << key;
  EXPECT_EQ(j.at("compiled"), 0);
  EXPECT_EQ(j.at("variants_measured"), 0);
}

TEST(JobStats, CompileOnlyJobsHaveNoGpuFigures) {
  JobStatsInput in;
  in.wall_seconds = 10;
  in.gpu_busy_seconds = 3;  // ignored: no GPU
  in.gpus = 0;
  in.progress = progress({{"compiled", 5}});
  const JobStats stats = compute_job_stats(in);
  EXPECT_DOUBLE_EQ(*stats.variants_per_minute, 30.0);
  EXPECT_FALSE(stats.gpu_busy_seconds.has_value());
  EXPECT_FALSE(stats.gpu_idle_fraction.has_value());
}

TEST(JobStats, IdleFractionIsClampedWhenBusyExceedsCapacity) {
  JobStatsInput in;
  in.wall_seconds = 10;
  in.gpu_busy_seconds = 12;  // overlapping resumed runs can over-count a little
  in.gpus = 1;
  EXPECT_DOUBLE_EQ(*compute_job_stats(in).gpu_idle_fraction, 0.0);
}

TEST(JobTimeline, WallSpansEarliestStartToLatestEndAndBusySums) {
  JobTimeline timeline;
  EXPECT_TRUE(timeline.empty());
  EXPECT_EQ(timeline.wall_seconds(), 0);
  const auto t0 = JobTimeline::Clock::now();
  using std::chrono::seconds;
  timeline.record(t0 + seconds(2), t0 + seconds(5));  // GPU 1
  timeline.record(t0, t0 + seconds(3));               // GPU 0, started first
  timeline.record(t0 + seconds(4), t0 + seconds(6));
  EXPECT_FALSE(timeline.empty());
  EXPECT_DOUBLE_EQ(timeline.wall_seconds(), 6.0);
  EXPECT_DOUBLE_EQ(timeline.busy_seconds(), 8.0);
}

TEST(JobTimeline, TheSweepStartCountsTowardsWallButNotBusy) {
  JobTimeline timeline;
  const auto t0 = JobTimeline::Clock::now();
  using std::chrono::seconds;
  timeline.mark_start(t0);  // compiles begin; the first measure call starts 2 s later
  EXPECT_FALSE(timeline.empty());
  EXPECT_DOUBLE_EQ(timeline.wall_seconds(), 0.0);
  timeline.record(t0 + seconds(2), t0 + seconds(3));
  EXPECT_DOUBLE_EQ(timeline.wall_seconds(), 3.0);
  EXPECT_DOUBLE_EQ(timeline.busy_seconds(), 1.0);
}

TEST(JobTimeline, RecordsFromManyThreads) {
  JobTimeline timeline;
  const auto t0 = JobTimeline::Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i)
        timeline.record(t0 + std::chrono::milliseconds(i), t0 + std::chrono::milliseconds(i + 1));
    });
  for (auto& thread : threads) thread.join();
  EXPECT_NEAR(timeline.busy_seconds(), 4.0, 1e-9);
  EXPECT_NEAR(timeline.wall_seconds(), 1.0, 1e-9);
}

}  // namespace
}  // namespace kt
