#include "bench/job_driver.hpp"

#include <gtest/gtest.h>

namespace kt::bench {
namespace {

nlohmann::json running_job() {
  return nlohmann::json::parse(R"({
    "id": 7, "status": "running", "reference_us": 35.0,
    "progress": {"total": 31105, "finished": 30770,
                 "by_status": {"pruned": 30754, "unsupported_arch": 1, "measured": 12,
                               "wrong_result": 1, "compile_error": 2, "pending": 335}},
    "best": {"id": 99, "template": "mma", "config": {"BM": 64, "BN": 128}, "median_us": 47.25}
  })");
}

TEST(JobDriver, RequestBodyCarriesOnlyWhatIsSet) {
  JobRequest request;
  request.shape = {64, 4096, 7168};
  request.budget = 24;
  const nlohmann::json plain = job_request_body(request);
  EXPECT_EQ(plain, nlohmann::json::parse(R"({"family":"gemm","shape":{"M":64,"N":4096,"K":7168},
                                            "dtype":"bf16","mode":"tune","budget":24})"));
  request.device = "0";
  request.pipeline = "serial";
  request.configs = {{{"template", "mma"}, {"BM", 64}}};
  const nlohmann::json full = job_request_body(request);
  EXPECT_EQ(full.at("device"), "0");
  EXPECT_EQ(full.at("pipeline"), "serial");
  EXPECT_EQ(full.at("configs"), nlohmann::json::parse(R"([{"template":"mma","BM":64}])"));
  request.arch = "sm_90a";
  EXPECT_EQ(job_request_body(request).at("mode"), "compile");
  EXPECT_EQ(job_request_body(request).at("arch"), "sm_90a");
}

TEST(JobDriver, CountsLeaveOutPrunedVariants) {
  const JobCounts counts = job_counts(running_job());
  EXPECT_EQ(counts.to_run, 350);
  EXPECT_EQ(counts.finished, 15);
  EXPECT_EQ(counts.measured, 12);
  ASSERT_TRUE(counts.best_us);
  EXPECT_DOUBLE_EQ(*counts.best_us, 47.25);
  const JobCounts empty = job_counts({{"id", 1}, {"status", "queued"}, {"best", nullptr}});
  EXPECT_EQ(empty.to_run, 0);
  EXPECT_FALSE(empty.best_us);
}

TEST(JobDriver, ProgressLine) {
  EXPECT_EQ(progress_line("gemm 64x4096x7168", running_job(), 14.2),
            "[gemm 64x4096x7168] job 7 running 15/350 variants, 12 measured, best 47.2 us, 14 s");
  EXPECT_EQ(progress_line("x", {{"id", 2}, {"status", "queued"}}, 0),
            "[x] job 2 queued, planning, 0 s");
}

TEST(JobDriver, PinnedConfigAndKey) {
  const nlohmann::json variant = running_job().at("best");
  EXPECT_EQ(pinned_config(variant),
            nlohmann::json::parse(R"({"template":"mma","BM":64,"BN":128})"));
  EXPECT_EQ(variant_key(variant), "mma|BM=64,BN=128");
  nlohmann::json other = variant;
  other["id"] = 1234;  // another job's row of the same config
  EXPECT_EQ(variant_key(other), variant_key(variant));
  other["template"] = "wgmma";
  EXPECT_NE(variant_key(other), variant_key(variant));
}

TEST(JobDriver, TerminalStatuses) {
  for (const char* s : {"done", "failed", "cancelled"}) EXPECT_TRUE(is_terminal_status(s));
  for (const char* s : {"queued", "running", ""}) EXPECT_FALSE(is_terminal_status(s));
}

}  // namespace
}  // namespace kt::bench
