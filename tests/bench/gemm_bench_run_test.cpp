#include "bench/gemm_bench_run.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace kt::bench {
namespace {

// Parses a command line the way kt-bench gemm does.
GemmBenchOptions parse(std::vector<std::string> args) {
  CLI::App app;
  GemmBenchOptions options;
  add_gemm_bench_options(app, options);
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form reversed
  app.parse(args);
  finish_gemm_bench_options(options);
  return options;
}

TEST(GemmBenchOptions, DefaultsRunTheSquareSet) {
  const GemmBenchOptions options = parse({});
  EXPECT_EQ(options.server, "http://127.0.0.1:8080");
  EXPECT_EQ(options.budget, 0);
  EXPECT_EQ(options.shapes, square_set_shapes());
  EXPECT_EQ(options.latest, "bench/results/gemm-latest.json");
  EXPECT_TRUE(options.doc.empty());
}

TEST(GemmBenchOptions, DocAloneNamesTheBenchmarksDocument) {
  EXPECT_EQ(parse({"--doc"}).doc, "docs/benchmarks.md");
  EXPECT_EQ(parse({"--doc", "x/notes.md"}).doc, "x/notes.md");
  EXPECT_EQ(parse({"--doc=y.md"}).doc, "y.md");
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

TEST(GemmBenchOptions, Fp8ScalingTunesTheFp8FamilyOnItsOwnSet) {
  const GemmBenchOptions options = parse({"--fp8-scaling", "block"});
  EXPECT_EQ(options.dtype, "e4m3") << "fp8's default dtype";
  EXPECT_EQ(options.shapes, fp8_shapes());
  EXPECT_EQ(options.latest, "bench/results/gemm-fp8-block-latest.json");
  const JobRequest request = gemm_shape_request(options, {64, 2112, 7168});
  EXPECT_EQ(request.family, "gemm_fp8");
  EXPECT_EQ(request.dims, (std::map<std::string, std::int64_t>{
                              {"M", 64}, {"N", 2112}, {"K", 7168}, {"BLOCK_SCALED", 1}}));
  EXPECT_EQ(gemm_shape_request(parse({"--fp8-scaling", "tensor", "--dtype", "e5m2"}), {1, 2, 16})
                .dims.at("BLOCK_SCALED"),
            0);
  const GemmBenchOptions plain = parse({});
  EXPECT_EQ(gemm_shape_request(plain, {1, 2, 3}).family, "gemm");
  EXPECT_TRUE(gemm_shape_request(plain, {1, 2, 3}).dims.empty());
  EXPECT_THROW(parse({"--fp8-scaling", "row"}), CLI::ValidationError);
}

TEST(GemmBenchOptions, RepeatDefaultsToOneAndMustBePositive) {
  EXPECT_EQ(parse({}).repeat, 1);
  EXPECT_EQ(parse({"--repeat", "3"}).repeat, 3);
  EXPECT_THROW(parse({"--repeat", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--repeat", "-2"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--repeat", "two"}), CLI::ValidationError);
  GemmBenchOptions options;  // set from code, not from a command line
  options.repeat = 0;
  EXPECT_THROW(finish_gemm_bench_options(options), std::invalid_argument);
}

// A job as GET /v1/jobs/{id} gives it once its final comparison ran: "best" is the comparison's
// winner with its first-pass median_us, and "best"."final" its interleaved figures.
JobRun finished_job() {
  JobRun run;
  run.seconds = 41.6;
  run.job = nlohmann::json::parse(R"({
    "id": 3, "status": "done", "reason": null, "reference_us": 176.7,
    "progress": {"total": 400, "finished": 400,
                 "by_status": {"pruned": 376, "measured": 23, "wrong_result": 1}},
    "comparison": {"winner_variant_id": 42, "final": {
      "variant_ids": [42, 40, 44], "winner_variant_id": 42,
      "speedups": [{"value": 1.02, "low": 0.99, "high": 1.04},
                   {"value": 1.01, "low": 0.98, "high": 1.03},
                   {"value": 0.97, "low": 0.95, "high": 0.99}]}},
    "best": {"id": 42, "template": "wgmma_ws", "config": {"BM": 128, "BN": 256},
             "median_us": 160.5,
             "final": {"median_us": 162.0, "timing": {"median_us": 162.0}, "winner": true,
                       "baseline": {"kind": "cublaslt_gemm", "library": "cublasLt 130100",
                                    "workspace_limit_bytes": 33554432,
                                    "heuristic_algorithms": 8, "algorithm_index": 2,
                                    "algorithm": {"id": 66, "tile": 21, "stages": 14,
                                                  "split_k": 1, "reduction": 0,
                                                  "cta_swizzling": 0, "cluster_shape": 1},
                                    "selection": []},
                       "baseline_median_us": 165.2, "speedup": 1.02, "speedup_low": 0.99,
                       "speedup_high": 1.04, "faster_than_baseline": false}}
  })");
  return run;
}

// The same job before the final comparison existed (or when it did not run).
JobRun first_pass_only_job() {
  JobRun run = finished_job();
  run.job["best"].erase("final");
  run.job["comparison"]["final"] = nullptr;
  return run;
}

TEST(GemmBenchRow, FromTheFinalComparison) {
  const GemmRow row = gemm_row_from_job({4096, 4096, 4096}, "bf16", finished_job());
  EXPECT_EQ(row.shape, (GemmShape{4096, 4096, 4096}));
  EXPECT_DOUBLE_EQ(*row.ours_us, 162.0);
  EXPECT_DOUBLE_EQ(*row.baseline_us, 165.2);
  EXPECT_DOUBLE_EQ(*row.ratio, 1.02);
  EXPECT_DOUBLE_EQ(*row.ratio_low, 0.99);
  EXPECT_DOUBLE_EQ(*row.ratio_high, 1.04);
  EXPECT_DOUBLE_EQ(*row.first_pass_us, 160.5);
  EXPECT_EQ(row.baseline.at("kind"), "cublaslt_gemm");
  EXPECT_EQ(row.baseline.at("algorithm_index"), 2);
  EXPECT_EQ(row.baseline.at("algorithm").at("id"), 66);
  EXPECT_EQ(baseline_algorithm_text(row.baseline),
            "algo 2 of 8 (id 66, tile 21, stages 14, split-K 1)");
  EXPECT_EQ(row.config, nlohmann::json::parse(R"({"template":"wgmma_ws","BM":128,"BN":256})"));
  EXPECT_EQ(row.variants_measured, 23);
  EXPECT_DOUBLE_EQ(row.tuning_seconds, 41.6);
  EXPECT_TRUE(row.note.empty()) << row.note;
  // 1.02x [0.99, 1.04]: the interval spans the 1.03x target, so it is not shown met.
  EXPECT_EQ(target_cell(row.shape, gemm_figures(row, std::nullopt), "NVIDIA H100 80GB HBM3"),
            "≥1.03×: not shown (interval spans target)");

  const GemmRepeat run = gemm_repeat_from_row(row, 3);
  EXPECT_EQ(run.job_id, 3);
  EXPECT_DOUBLE_EQ(*run.ours_us, 162.0);
  EXPECT_DOUBLE_EQ(*run.baseline_us, 165.2);
  EXPECT_DOUBLE_EQ(*run.ratio, 1.02);
  EXPECT_DOUBLE_EQ(*run.ratio_low, 0.99);
  EXPECT_DOUBLE_EQ(*run.ratio_high, 1.04);
  EXPECT_EQ(run.config, row.config);
}

TEST(GemmBenchRow, WithoutAFinalComparisonFallsBackToTheFirstPassAndSaysSo) {
  const GemmRow row = gemm_row_from_job({4096, 4096, 4096}, "bf16", first_pass_only_job());
  EXPECT_DOUBLE_EQ(*row.ours_us, 160.5);
  EXPECT_DOUBLE_EQ(*row.first_pass_us, 160.5);
  EXPECT_DOUBLE_EQ(*row.baseline_us, 176.7);  // the job's reference_us
  EXPECT_FALSE(row.ratio_low);
  EXPECT_FALSE(row.ratio_high);
  EXPECT_TRUE(row.baseline.is_null());
  EXPECT_EQ(row.note, "no final comparison: first-pass figures, no interval");
  const GemmFigures figures = gemm_figures(row, std::nullopt);
  EXPECT_DOUBLE_EQ(*figures.ratio, 176.7 / 160.5);
  EXPECT_EQ(ratio_cell(figures), "1.10× (no interval)");

  JobRun no_baseline = finished_job();  // a final comparison that had no baseline
  no_baseline.job["best"]["final"].erase("speedup");
  no_baseline.job["best"]["final"].erase("baseline_median_us");
  const GemmRow partial = gemm_row_from_job({4096, 4096, 4096}, "bf16", no_baseline);
  EXPECT_DOUBLE_EQ(*partial.ours_us, 160.5);  // never a final median over a first-pass baseline
  EXPECT_DOUBLE_EQ(*partial.baseline_us, 176.7);
  EXPECT_EQ(partial.note, "final comparison without the baseline: first-pass figures, no interval");
}

TEST(GemmBenchRow, CutShortFailedAndEmptyJobsSayWhy) {
  JobRun cut = first_pass_only_job();
  cut.cut_short = true;
  cut.job["status"] = "cancelled";
  cut.job["progress"]["finished"] = 390;
  EXPECT_EQ(gemm_row_from_job({1, 2, 3}, "bf16", cut).note,
            "cut short after 42 s (time limit): 14 of 24 variants ran; no final comparison: "
            "first-pass figures, no interval");

  JobRun failed = finished_job();
  failed.job["status"] = "failed";
  failed.job["reason"] = "worker could not start";
  failed.job["best"] = nullptr;
  failed.job["reference_us"] = nullptr;
  const GemmRow row = gemm_row_from_job({1, 2, 3}, "bf16", failed);
  EXPECT_FALSE(row.ours_us);
  EXPECT_FALSE(row.first_pass_us);
  EXPECT_TRUE(row.config.is_null());
  EXPECT_EQ(row.note, "job failed: worker could not start; no variant measured; no baseline time");
}

TEST(GemmBenchRepeat, PinsTheFinalComparisonsCandidatesWinnerFirst) {
  const std::vector<nlohmann::json> variants = {
      nlohmann::json::parse(
          R"({"id": 44, "template": "wgmma_ws", "config": {"BM": 64, "BN": 256}})"),
      nlohmann::json::parse(R"({"id": 40, "template": "mma", "config": {"BM": 128, "BN": 128}})"),
      nlohmann::json::parse(
          R"({"id": 42, "template": "wgmma_ws", "config": {"BM": 128, "BN": 256}})"),
      nlohmann::json::parse(R"({"id": 41, "template": "mma", "config": {"BM": 64, "BN": 64}})")};
  const std::vector<nlohmann::json> configs = final_candidate_configs(finished_job().job, variants);
  ASSERT_EQ(configs.size(), 3u);  // 42, 40, 44; 41 was not in the final comparison
  EXPECT_EQ(configs[0], nlohmann::json::parse(R"({"template":"wgmma_ws","BM":128,"BN":256})"));
  EXPECT_EQ(configs[1], nlohmann::json::parse(R"({"template":"mma","BM":128,"BN":128})"));
  EXPECT_EQ(configs[2], nlohmann::json::parse(R"({"template":"wgmma_ws","BM":64,"BN":256})"));

  // No listing, or no final comparison: the winner alone.
  EXPECT_EQ(final_candidate_configs(finished_job().job, {}), std::vector{configs[0]});
  EXPECT_EQ(final_candidate_configs(first_pass_only_job().job, variants), std::vector{configs[0]});
  // Nothing measured: nothing to repeat.
  JobRun failed = finished_job();
  failed.job["best"] = nullptr;
  failed.job["comparison"] = nullptr;
  EXPECT_TRUE(final_candidate_configs(failed.job, variants).empty());
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
