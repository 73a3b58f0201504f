// The --wait progress line: counts read from a job, the bar, and when lines are printed.
#include <gtest/gtest.h>

#include <sstream>

#include "client/progress_bar.hpp"

namespace kt {
namespace {

nlohmann::json running_job() {
  return {{"status", "running"},
          {"mode", "tune"},
          {"progress",
           {{"total", 140},
            {"finished", 57},
            {"by_status",
             {{"measured", 30},
              {"compile_error", 4},
              {"wrong_result", 3},
              {"pruned", 19},
              {"unsupported_arch", 1}}}}},
          {"best", {{"median_us", 812.4}}}};
}

TEST(ProgressBar, SnapshotCountsOnlyVariantsThatGoThroughTheGates) {
  const auto s = snapshot_from_job(running_job());
  EXPECT_EQ(s.total, 120);
  EXPECT_EQ(s.finished, 37);
  EXPECT_EQ(s.pruned, 20);
  EXPECT_EQ(s.succeeded, 30);
  EXPECT_EQ(s.failed, 7);
  ASSERT_TRUE(s.best_us);
  EXPECT_DOUBLE_EQ(*s.best_us, 812.4);
}

TEST(ProgressBar, RendersTheDocumentedLine) {
  EXPECT_EQ(render_progress(snapshot_from_job(running_job()), 10),
            "[###.......] 37/120 variants  measured 30  failed 7  best 812.4 us");
}

TEST(ProgressBar, CompileJobsCountCompiledAndHaveNoBest) {
  nlohmann::json job = {
      {"status", "done"},
      {"mode", "compile"},
      {"progress",
       {{"total", 4}, {"finished", 4}, {"by_status", {{"compiled", 3}, {"compile_error", 1}}}}},
      {"best", nullptr}};
  EXPECT_EQ(render_progress(snapshot_from_job(job), 4),
            "[####] 4/4 variants  compiled 3  failed 1  (done)");
}

TEST(ProgressBar, UnplannedJobSaysItIsPlanning) {
  EXPECT_EQ(render_progress(snapshot_from_job({{"status", "queued"}}), 4),
            "[....] planning the variant space (queued)");
}

TEST(ProgressBar, EmptyFinishedJobDoesNotDivideByZero) {
  EXPECT_EQ(render_progress(snapshot_from_job({{"status", "failed"}}), 4),
            "[....] 0/0 variants  measured 0  failed 0  (failed)");
}

TEST(ProgressBar, NonInteractiveOutputIsThrottledToStatusChanges) {
  std::ostringstream out;
  ProgressDisplay display(out, false, std::chrono::seconds(3600));
  auto s = snapshot_from_job(running_job());
  display.update(s);
  display.update(s);  // same status, interval not passed: nothing new
  s.status = "done";
  display.update(s);
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(ProgressBar, InteractiveOutputRedrawsInPlace) {
  std::ostringstream out;
  ProgressDisplay display(out, true);
  const auto s = snapshot_from_job(running_job());
  display.update(s);
  display.update(s);
  display.finish(s);
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 3);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

}  // namespace
}  // namespace kt
