#include "bench/gemm_bench_run.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

// Parses a command line the way kt-gemm-bench's main does.
GemmBenchOptions parse(std::vector<std::string> args) {
  CLI::App app;
  GemmBenchOptions options;
  add_gemm_bench_options(app, options);
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form reversed
  app.parse(args);
  finish_gemm_bench_options(options);
  return options;
}

TEST(GemmBenchOptions, DefaultsRunTheIssue4Shapes) {
  const GemmBenchOptions options = parse({});
  EXPECT_EQ(options.server, "http://127.0.0.1:8080");
  EXPECT_EQ(options.budget, 0);
  EXPECT_EQ(options.shapes, issue4_shapes());
  EXPECT_EQ(options.latest, "bench/results/gemm-latest.json");
  EXPECT_TRUE(options.readme.empty());
}

TEST(GemmBenchOptions, ShapesBudgetsAndLimits) {
  const GemmBenchOptions options =
      parse({"--server", "http://127.0.0.1:9000", "--budget", "16", "--shape", "4096x4096x4096:64",
             "--shape", "1x4096x7168", "--deadline-s", "200", "--job-timeout-s", "60",
             "--copy-gbps", "3000", "--out-dir", "/tmp/x", "--latest", ""});
  ASSERT_EQ(options.shapes.size(), 2u);
  EXPECT_EQ(options.shapes[0], (GemmShape{4096, 4096, 4096, 64}));
  EXPECT_EQ(options.shapes[1], (GemmShape{1, 4096, 7168, -1}));
  EXPECT_EQ(options.budget, 16);
  EXPECT_DOUBLE_EQ(options.deadline_seconds, 200);
  EXPECT_DOUBLE_EQ(options.copy_gbps, 3000);
  EXPECT_TRUE(options.latest.empty());
}

TEST(GemmBenchOptions, RefusesBadInput) {
  EXPECT_THROW(parse({"--budget", "-1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--copy-gbps", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--shape", "4096x4096"}), std::invalid_argument);
  EXPECT_THROW(parse({"--copy-json", "/no/such/file.json"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--poll-ms", "1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--no-such-option"}), CLI::ExtrasError);
}

JobRun finished_job() {
  JobRun run;
  run.seconds = 41.6;
  run.job = nlohmann::json::parse(R"({
    "id": 3, "status": "done", "reason": null, "reference_us": 176.7,
    "progress": {"total": 400, "finished": 400,
                 "by_status": {"pruned": 376, "measured": 23, "wrong_result": 1}},
    "best": {"id": 42, "template": "wgmma_ws", "config": {"BM": 128, "BN": 256},
             "median_us": 160.5}
  })");
  return run;
}

TEST(GemmBenchRow, FromAFinishedJob) {
  const GemmRow row = gemm_row_from_job({4096, 4096, 4096}, "bf16", finished_job());
  EXPECT_EQ(row.shape, (GemmShape{4096, 4096, 4096}));
  EXPECT_DOUBLE_EQ(*row.ours_us, 160.5);
  EXPECT_DOUBLE_EQ(*row.cublas_us, 176.7);
  EXPECT_EQ(row.config, nlohmann::json::parse(R"({"template":"wgmma_ws","BM":128,"BN":256})"));
  EXPECT_EQ(row.variants_measured, 23);
  EXPECT_DOUBLE_EQ(row.tuning_seconds, 41.6);
  EXPECT_TRUE(row.note.empty());
}

TEST(GemmBenchRow, CutShortFailedAndEmptyJobsSayWhy) {
  JobRun cut = finished_job();
  cut.cut_short = true;
  cut.job["status"] = "cancelled";
  cut.job["progress"]["finished"] = 390;
  EXPECT_EQ(gemm_row_from_job({1, 2, 3}, "bf16", cut).note,
            "cut short after 42 s (time limit): 14 of 24 variants ran");

  JobRun failed = finished_job();
  failed.job["status"] = "failed";
  failed.job["reason"] = "worker could not start";
  failed.job["best"] = nullptr;
  failed.job["reference_us"] = nullptr;
  const GemmRow row = gemm_row_from_job({1, 2, 3}, "bf16", failed);
  EXPECT_FALSE(row.ours_us);
  EXPECT_TRUE(row.config.is_null());
  EXPECT_EQ(row.note, "job failed: worker could not start; no variant measured; no cuBLAS time");
}

TEST(GemmBenchCopy, ReadsKtCopyBandwidthOutput) {
  const CopyBandwidthInfo info = copy_bandwidth_from_json(
      {{"gbps", 2950.5}, {"device", "NVIDIA H100 80GB HBM3"}, {"driver", "580.159.04"}});
  EXPECT_DOUBLE_EQ(info.gbps, 2950.5);
  EXPECT_EQ(info.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(info.driver, "580.159.04");
  EXPECT_EQ(
      copy_bandwidth_from_json({{"gbps", 1.0}, {"driver", ""}, {"cuda_driver", "13.0"}}).driver,
      "CUDA 13.0");
  EXPECT_THROW(copy_bandwidth_from_json({{"device", "x"}}), std::invalid_argument);
  EXPECT_THROW(copy_bandwidth_from_json({{"gbps", 0}}), std::invalid_argument);
}

}  // namespace
}  // namespace kt::bench
