#include "bench/dual_gemm_report.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/dual_gemm_bench_run.hpp"
#include "bench/job_figures.hpp"
#include "bench/report_fields.hpp"

namespace kt::bench {
namespace {

TEST(DualGemmShapes, LabelsParseAndTheIssueShapes) {
  const DualGemmShape shape = parse_dual_shape_label("8x64x4096x7168:32");
  EXPECT_EQ(shape, (DualGemmShape{8, 64, 4096, 7168, 32}));
  EXPECT_EQ(dual_shape_label(shape), "8x64x4096x7168");
  EXPECT_EQ(parse_dual_shape_label("2x3x4x8").budget, -1);
  for (const char* bad :
       {"8x64x4096", "8x64x4096x7168x1", "0x1x1x8", "8x64x4096x7168:-1", "8x64xx7168", "a", ""})
    EXPECT_THROW(parse_dual_shape_label(bad), std::invalid_argument) << bad;
  const auto shapes = default_dual_gemm_shapes();
  ASSERT_EQ(shapes.size(), 8u);
  EXPECT_EQ(shapes.front(), (DualGemmShape{8, 64, 4096, 7168}));
  EXPECT_EQ(shapes.back(), (DualGemmShape{2, 384, 4096, 1536}));
}

TEST(DualGemmFigures, TflopsBandwidthAndTargets) {
  const DualGemmShape big{8, 256, 4096, 7168};
  // 4·G·M·N·K = 240.5 TFLOP in 417 us -> 576.8 TFLOP/s (the vendor figure).
  EXPECT_NEAR(dual_gemm_tflops(big, 417), 576.8, 0.1);
  EXPECT_DOUBLE_EQ(dual_gemm_min_bytes({1, 2, 3, 4}, 2), (2 * 4 + 2 * 3 * 4 + 2 * 3) * 2.0);

  DualGemmRow row;
  row.shape = big;
  row.ours_us = 300;
  row.unfused_us = 417;
  DualGemmFigures f = dual_gemm_figures(row, 3000.0);
  EXPECT_NEAR(*f.ratio, 1.39, 0.01);  // from the medians, no interval
  EXPECT_FALSE(f.ratio_low);
  EXPECT_NEAR(*f.bw_fraction, dual_gemm_min_bytes(big, 2) / 300e-6 / 1e9 / 3000, 1e-12);
  EXPECT_EQ(dual_target_cell(big, f), "≥1.25×: not shown (no interval)");
  row.ratio = 1.39;
  row.ratio_low = 1.30;
  row.ratio_high = 1.45;
  EXPECT_EQ(dual_target_cell(big, dual_gemm_figures(row, std::nullopt)), "≥1.25×: met");
  row.ratio_low = 1.20;
  EXPECT_EQ(dual_target_cell(big, dual_gemm_figures(row, std::nullopt)),
            "≥1.25×: not shown (interval spans target)");

  DualGemmRow small;
  small.shape = {8, 64, 4096, 7168};
  small.ours_us = dual_gemm_min_bytes(small.shape, 2) / 3000e9 * 1e6 / 0.95;  // 95% of copy BW
  EXPECT_EQ(dual_target_cell(small.shape, dual_gemm_figures(small, 3000.0)), "≥90% BW: met");
  EXPECT_EQ(dual_target_cell(small.shape, dual_gemm_figures(small, std::nullopt)),
            "≥90% BW: no result");
  EXPECT_EQ(dual_target_cell({2, 192, 3072, 4096}, f), "—");
}

// A dual_gemm_silu job after its final comparison against the unfused baseline.
JobRun finished_dual_job() {
  JobRun run;
  run.seconds = 52.4;
  run.job = nlohmann::json::parse(R"({
    "id": 9, "status": "done", "reason": null, "reference_us": null,
    "progress": {"total": 300, "finished": 300, "by_status": {"pruned": 280, "measured": 18,
                                                             "compile_error": 2}},
    "comparison": {"winner_variant_id": 51, "final": {"variant_ids": [51, 50, 53]}},
    "best": {"id": 51, "template": "wgmma_tma_ws", "config": {"BM": 128, "BN": 128},
             "median_us": 301.0,
             "final": {"median_us": 305.0, "baseline": {"kind": "unfused_dual_gemm_silu"},
                       "baseline_median_us": 417.0, "speedup": 1.367, "speedup_low": 1.35,
                       "speedup_high": 1.38}}
  })");
  return run;
}

TEST(DualGemmRows, FromTheJobsFinalComparison) {
  const DualGemmRow row = dual_gemm_row_from_job({8, 256, 4096, 7168}, "bf16", finished_dual_job());
  EXPECT_EQ(row.ours_us, 305.0);
  EXPECT_EQ(row.first_pass_us, 301.0);
  EXPECT_EQ(row.unfused_us, 417.0);
  EXPECT_EQ(row.ratio, 1.367);
  EXPECT_EQ(row.ratio_low, 1.35);
  EXPECT_EQ(row.ratio_high, 1.38);
  EXPECT_EQ(row.variants_measured, 18);
  EXPECT_EQ(row.job_id, 9);
  EXPECT_EQ(row.config, (nlohmann::json{{"template", "wgmma_tma_ws"}, {"BM", 128}, {"BN", 128}}));
  EXPECT_EQ(row.baseline.at("kind"), "unfused_dual_gemm_silu");
  EXPECT_EQ(row.note, "");

  const JobFigures figures = job_figures(finished_dual_job(), true);
  EXPECT_EQ(figures.candidate_ids, (std::vector<std::int64_t>{51, 50, 53}));

  JobRun failed = finished_dual_job();
  failed.job["status"] = "failed";
  failed.job["reason"] = "no GPU";
  failed.job["best"] = nullptr;
  failed.job["progress"]["by_status"]["measured"] = 0;
  const DualGemmRow none = dual_gemm_row_from_job({8, 64, 4096, 7168}, "bf16", failed);
  EXPECT_FALSE(none.ours_us);
  EXPECT_EQ(none.note, "job failed: no GPU; no variant measured");

  JobRun no_baseline = finished_dual_job();
  no_baseline.job["best"]["final"].erase("baseline_median_us");
  EXPECT_EQ(dual_gemm_row_from_job({8, 64, 4096, 7168}, "bf16", no_baseline).note,
            "no baseline time");
}

TEST(DualGemmReport, JsonRoundTripRendersTheSameTable) {
  DualGemmReport report;
  report.device = "NVIDIA H200";
  report.driver = "CUDA driver 13000";
  report.date = "2026-11-26";
  report.copy_gbps = 4000;
  report.rows.push_back(dual_gemm_row_from_job({8, 256, 4096, 7168}, "bf16", finished_dual_job()));
  DualGemmRow skipped;
  skipped.shape = {2, 128, 4096, 1536};
  skipped.note = "skipped: the run's time limit (600 s) had passed";
  report.rows.push_back(skipped);

  const nlohmann::json j = dual_gemm_report_to_json(report);
  const nlohmann::json& first = j.at("rows")[0];
  EXPECT_EQ(first.at("shape"), "8x256x4096x7168");
  EXPECT_EQ(first.at("unfused_us"), 417.0);
  EXPECT_NEAR(first.at("tflops").get<double>(), dual_gemm_tflops({8, 256, 4096, 7168}, 305), 1e-9);
  EXPECT_TRUE(first.at("bw_fraction").is_number());
  EXPECT_TRUE(j.at("rows")[1].at("ours_us").is_null());
  EXPECT_EQ(j.at("rows")[1].at("note"), skipped.note);

  const DualGemmReport back = dual_gemm_report_from_json(j);
  EXPECT_EQ(dual_gemm_report_to_json(back), j);
  const std::string table = render_dual_gemm_table(report);
  EXPECT_EQ(render_dual_gemm_table(back), table);
  EXPECT_NE(table.find("| 8×256×4096×7168 | `wgmma_tma_ws` BM=128 BN=128 | 305.0 µs | 417.0 µs | "
                       "1.37× [1.35, 1.38] |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("≥1.25×: met"), std::string::npos);
  EXPECT_NE(table.find("- 2×128×4096×1536: skipped"), std::string::npos);
  EXPECT_NE(render_dual_gemm_table(report, "bench/results/x/").find("Raw output: "),
            std::string::npos);

  nlohmann::json bad = j;
  bad["rows"][0]["ratio_low"] = nullptr;
  EXPECT_THROW(dual_gemm_report_from_json(bad), std::invalid_argument);
  bad = j;
  bad["rows"][0]["unfused_us"] = "fast";
  EXPECT_THROW(dual_gemm_report_from_json(bad), std::invalid_argument);
}

TEST(DualGemmBenchOptions, DefaultsAndErrors) {
  DualGemmBenchOptions options;
  CLI::App app;
  add_dual_gemm_bench_options(app, options);
  // CLI11 takes a vector of arguments last-first.
  app.parse(std::vector<std::string>{"12", "--budget", "8x64x4096x7168:4", "--shape"});
  finish_dual_gemm_bench_options(options);
  EXPECT_EQ(options.latest, "bench/results/dual-gemm-latest.json");
  ASSERT_EQ(options.shapes.size(), 1u);
  EXPECT_EQ(options.shapes[0].budget, 4);
  DualGemmBenchOptions defaults;
  finish_dual_gemm_bench_options(defaults);
  EXPECT_EQ(defaults.shapes, default_dual_gemm_shapes());
  defaults.shape_texts = {"8x64"};
  EXPECT_THROW(finish_dual_gemm_bench_options(defaults), std::invalid_argument);
}

TEST(ReportFields, RatioVerdictAndCells) {
  EXPECT_EQ(ratio_verdict(1.0, std::nullopt, std::nullopt, std::nullopt), "no result");
  EXPECT_EQ(ratio_verdict(1.0, 0.9, std::nullopt, std::nullopt), "missed");
  EXPECT_EQ(ratio_verdict(1.0, 1.1, std::nullopt, std::nullopt), "not shown (no interval)");
  EXPECT_EQ(ratio_verdict(1.0, 1.1, 1.05, 1.2), "met");
  EXPECT_EQ(ratio_verdict(1.0, 0.95, 0.9, 0.99), "missed");
  EXPECT_EQ(ratio_verdict(1.0, 1.0, 0.98, 1.02), "not shown (interval spans target)");
  EXPECT_EQ(ratio_interval_cell(1.234, 1.2, 1.25), "1.23× [1.20, 1.25]");
  EXPECT_EQ(ratio_interval_cell(std::nullopt, std::nullopt, std::nullopt), "—");
  EXPECT_EQ(dims_label({1, 2, 3}, "×"), "1×2×3");
}

}  // namespace
}  // namespace kt::bench
