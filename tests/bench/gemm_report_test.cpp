#include "bench/gemm_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "bench/gemm_shape_sets.hpp"

namespace kt::bench {
namespace {

// What the daemon says of its cublasLt baseline (worker/cublaslt_gemm.cpp describe()).
nlohmann::json cublaslt_baseline() {
  return nlohmann::json::parse(R"({
    "kind": "cublaslt_gemm", "library": "cublasLt 130100", "workspace_limit_bytes": 33554432,
    "heuristic_algorithms": 8, "algorithm_index": 2,
    "algorithm": {"id": 66, "tile": 21, "stages": 14, "split_k": 1, "reduction": 0,
                  "cta_swizzling": 1, "cluster_shape": 2},
    "selection": [{"index": 0, "median_us": 181.0, "workspace_bytes": 0}]
  })");
}

GemmRepeat repeat_with_ratio(std::int64_t job_id, double ratio) {
  GemmRepeat repeat;
  repeat.job_id = job_id;
  repeat.ours_us = 160;
  repeat.baseline_us = 160 * ratio;
  repeat.ratio = ratio;
  repeat.ratio_low = ratio - 0.02;
  repeat.ratio_high = ratio + 0.02;
  repeat.config = {{"template", "wgmma_ws"}, {"BM", 128}, {"BN", 256}};
  return repeat;
}

GemmReport sample_report() {
  GemmReport report;
  report.device = "NVIDIA H100 80GB HBM3";
  report.driver = "580.159.04";
  report.date = "2026-11-23";
  report.copy_gbps = 3000;
  GemmRow big;
  big.shape = {4096, 4096, 4096};
  big.config = {{"template", "wgmma_ws"}, {"BM", 128}, {"BN", 256}};
  big.ours_us = 160;
  big.baseline_us = 176;
  big.ratio = 1.1;
  big.ratio_low = 1.08;
  big.ratio_high = 1.12;
  big.baseline = cublaslt_baseline();
  big.first_pass_us = 158;
  big.variants_measured = 24;
  big.tuning_seconds = 41.6;
  big.repeats = {repeat_with_ratio(3, 1.10), repeat_with_ratio(7, 1.12),
                 repeat_with_ratio(9, 1.09)};
  big.repeats[2].config["BN"] = 128;  // the third run's winner differs
  GemmRow skinny;
  skinny.shape = {64, 4096, 7168};
  skinny.config = {{"template", "splitk"}, {"SPLIT_K", 4}};
  skinny.ours_us = 30;
  skinny.baseline_us = 35;
  skinny.ratio = 35.0 / 30.0;
  skinny.ratio_low = 1.15;
  skinny.ratio_high = 1.18;
  skinny.baseline = cublaslt_baseline();
  skinny.first_pass_us = 29.5;
  skinny.variants_measured = 12;
  skinny.tuning_seconds = 9;
  GemmRow failed;
  failed.shape = {8192, 8192, 8192};
  failed.note = "skipped: the run's time limit (200 s) had passed";
  report.rows = {big, skinny, failed};
  return report;
}

// A row as the GEMM benchmark wrote it before the interleaved final comparison
// (bench/results/gemm-latest.json of 2026-11-22).
nlohmann::json old_format_report() {
  return nlohmann::json::parse(R"({
    "copy_gbps": 2990.2579338340774, "date": "2026-11-22", "device": "NVIDIA H100 80GB HBM3",
    "driver": "580.159.04",
    "rows": [{"bw_fraction": 0.09482746412629438,
              "config": {"BK": 64, "BM": 128, "template": "wgmma_tma_ws"},
              "cublas_us": 1424.0319728851318, "dtype": "bf16", "ours_us": 1420.0000166893005,
              "ratio": 1.0028394057383405, "shape": "8192x8192x8192",
              "tflops": 774.3039541221189, "tuning_seconds": 201.834688538,
              "variants_measured": 96},
             {"bw_fraction": 0.6, "config": {"BM": 128, "template": "skinny_splitk"},
              "cublas_us": 26.1, "dtype": "bf16", "ours_us": 32.3, "ratio": 0.81,
              "shape": "128x4096x7168", "tflops": 233.0, "tuning_seconds": 10.0,
              "variants_measured": 64}]
  })");
}

TEST(GemmReport, JsonHasTheBaselineTheIntervalAndEveryRun) {
  const nlohmann::json j = gemm_report_to_json(sample_report());
  EXPECT_EQ(j.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j.at("driver"), "580.159.04");
  EXPECT_EQ(j.at("date"), "2026-11-23");
  EXPECT_EQ(j.at("copy_gbps"), 3000.0);
  ASSERT_EQ(j.at("rows").size(), 3u);
  const nlohmann::json& big = j.at("rows")[0];
  for (const char* key :
       {"shape", "dtype", "config", "ours_us", "baseline_us", "ratio", "ratio_low", "ratio_high",
        "baseline", "first_pass_us", "tflops", "bw_fraction", "variants_measured", "tuning_seconds",
        "repeats", "ratio_spread"})
    EXPECT_TRUE(big.contains(key)) << key;
  EXPECT_FALSE(big.contains("cublas_us"));
  EXPECT_FALSE(big.contains("note"));
  EXPECT_EQ(big.at("shape"), "4096x4096x4096");
  EXPECT_EQ(big.at("dtype"), "bf16");
  EXPECT_EQ(big.at("config").at("template"), "wgmma_ws");
  EXPECT_DOUBLE_EQ(big.at("baseline_us").get<double>(), 176.0);
  EXPECT_DOUBLE_EQ(big.at("ratio").get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(big.at("ratio_low").get<double>(), 1.08);
  EXPECT_DOUBLE_EQ(big.at("ratio_high").get<double>(), 1.12);
  EXPECT_DOUBLE_EQ(big.at("first_pass_us").get<double>(), 158.0);
  EXPECT_EQ(big.at("baseline"), cublaslt_baseline());
  EXPECT_NEAR(big.at("tflops").get<double>(), 2.0 * 4096 * 4096 * 4096 / 160e-6 / 1e12, 1e-9);
  const double bytes = (4096.0 * 4096 * 3) * 2;
  EXPECT_NEAR(big.at("bw_fraction").get<double>(), bytes / 160e-6 / 1e9 / 3000, 1e-12);
  ASSERT_EQ(big.at("repeats").size(), 3u);
  const nlohmann::json& second = big.at("repeats")[1];
  EXPECT_EQ(second.at("job_id"), 7);
  EXPECT_DOUBLE_EQ(second.at("ratio").get<double>(), 1.12);
  EXPECT_DOUBLE_EQ(second.at("ratio_low").get<double>(), 1.10);
  EXPECT_DOUBLE_EQ(second.at("ratio_high").get<double>(), 1.14);
  EXPECT_DOUBLE_EQ(second.at("ours_us").get<double>(), 160.0);
  EXPECT_EQ(second.at("config").at("BN"), 256);
  EXPECT_NEAR(big.at("ratio_spread").get<double>(), (1.12 - 1.09) / 1.10, 1e-12);
  const nlohmann::json& failed = j.at("rows")[2];
  EXPECT_TRUE(failed.at("ours_us").is_null());
  EXPECT_TRUE(failed.at("ratio").is_null());
  EXPECT_TRUE(failed.at("ratio_low").is_null());
  EXPECT_TRUE(failed.at("config").is_null());
  EXPECT_TRUE(failed.at("baseline").is_null());
  EXPECT_TRUE(failed.at("repeats").empty());
  EXPECT_TRUE(failed.at("ratio_spread").is_null());
  EXPECT_EQ(failed.at("note"), "skipped: the run's time limit (200 s) had passed");
}

TEST(GemmReport, JsonRoundTripsToTheSameTable) {
  const GemmReport report = sample_report();
  const GemmReport back = gemm_report_from_json(gemm_report_to_json(report));
  EXPECT_EQ(gemm_report_to_json(back), gemm_report_to_json(report));
  EXPECT_EQ(render_gemm_table(back), render_gemm_table(report));
}

TEST(GemmReport, OldReportsStillReadAndRender) {
  const GemmReport report = gemm_report_from_json(old_format_report());
  ASSERT_EQ(report.rows.size(), 2u);
  const GemmRow& row = report.rows[0];
  EXPECT_DOUBLE_EQ(*row.baseline_us, 1424.0319728851318);
  EXPECT_DOUBLE_EQ(*row.first_pass_us, 1420.0000166893005);  // ours was the first pass then
  EXPECT_FALSE(row.ratio_low);
  EXPECT_EQ(row.baseline.at("kind"), "cublas_gemm_ex");
  EXPECT_TRUE(row.repeats.empty());
  const GemmFigures figures = gemm_figures(row, report.copy_gbps);
  EXPECT_NEAR(*figures.ratio, 1.0028394057383405, 1e-12);  // derived, as before

  const std::string table = render_gemm_table(report);
  EXPECT_NE(table.find("GEMM against cuBLAS cublasGemmEx (default heuristic, no workspace) on "
                       "NVIDIA H100 80GB HBM3 (driver 580.159.04), 2026-11-22"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("`cublasGemmEx` with its default heuristic and no workspace"),
            std::string::npos);
  // A point ratio over the target is not a met target; one under it is a miss.
  EXPECT_NE(table.find(
                "| 1424.0 µs | 1.00× (no interval) | ours | — | 774.3 | 9.5% | ≥1.03×: missed | 96 "
                "| 202 s |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| 0.81× (no interval) |"), std::string::npos) << table;
  EXPECT_EQ(table.find("≥1.2×"), std::string::npos) << "the decode targets are the H200's";
  EXPECT_EQ(table.find("run-to-run spread"), std::string::npos);

  // Written back in the new format, it reads and renders the same.
  const nlohmann::json rewritten = gemm_report_to_json(report);
  EXPECT_FALSE(rewritten.at("rows")[0].contains("cublas_us"));
  EXPECT_DOUBLE_EQ(rewritten.at("rows")[0].at("baseline_us").get<double>(), 1424.0319728851318);
  EXPECT_EQ(render_gemm_table(gemm_report_from_json(rewritten)), table);
}

TEST(GemmReport, FromJsonRejectsBadFields) {
  EXPECT_THROW(gemm_report_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(gemm_report_from_json({{"device", "x"}}), std::invalid_argument);
  nlohmann::json j = gemm_report_to_json(sample_report());
  j["rows"][0]["ours_us"] = "fast";
  EXPECT_THROW(gemm_report_from_json(j), std::invalid_argument);
  j = gemm_report_to_json(sample_report());
  j["rows"][0]["shape"] = "4096x4096";
  EXPECT_THROW(gemm_report_from_json(j), std::invalid_argument);
  j = gemm_report_to_json(sample_report());
  j["rows"][0]["ratio_high"] = nullptr;  // half an interval
  EXPECT_THROW(gemm_report_from_json(j), std::invalid_argument);
  j = gemm_report_to_json(sample_report());
  j["rows"][0]["baseline"] = "cublasLt";
  EXPECT_THROW(gemm_report_from_json(j), std::invalid_argument);
  j = gemm_report_to_json(sample_report());
  j["rows"][0]["repeats"] = {{"ratio", "x"}};
  EXPECT_THROW(gemm_report_from_json(j), std::invalid_argument);
}

TEST(GemmReport, TargetsOfIssue14) {
  const std::string h100 = "NVIDIA H100 80GB HBM3", h200 = "NVIDIA H200";
  EXPECT_DOUBLE_EQ(shape_target({8192, 8192, 8192}, h100)->min_ratio, 1.03);
  EXPECT_DOUBLE_EQ(shape_target({4096, 4096, 4096}, h200)->min_ratio, 1.03);
  EXPECT_FALSE(shape_target({4096, 4096, 4096}, h200)->min_bw_fraction);
  EXPECT_DOUBLE_EQ(shape_target({64, 4096, 7168}, h200)->min_ratio, 1.2);
  EXPECT_DOUBLE_EQ(*shape_target({1, 4096, 7168}, h200)->min_bw_fraction, 0.85);
  EXPECT_DOUBLE_EQ(shape_target({128, 4096, 7168}, h200)->min_ratio, 1.0);
  EXPECT_FALSE(shape_target({128, 4096, 7168}, h200)->min_bw_fraction);
  EXPECT_FALSE(shape_target({1, 4096, 7168}, h100));  // the decode targets are the H200's
  EXPECT_FALSE(shape_target({2048, 2048, 2048}, h200));
  EXPECT_FALSE(shape_target({256, 7168, 2048}, h200));
}

GemmFigures figures_of(double ratio, std::optional<double> low, std::optional<double> high,
                       std::optional<double> bw_fraction = std::nullopt) {
  GemmFigures figures;
  figures.ratio = ratio;
  figures.ratio_low = low;
  figures.ratio_high = high;
  figures.bw_fraction = bw_fraction;
  return figures;
}

TEST(GemmReport, TargetIsMetOnlyWhenTheIntervalClearsIt) {
  const std::string h200 = "NVIDIA H200";
  const GemmShape square{4096, 4096, 4096};
  EXPECT_EQ(target_cell(square, figures_of(1.03, 1.01, 1.05), h200),
            "≥1.03×: not shown (interval spans target)");
  EXPECT_EQ(target_cell(square, figures_of(1.04, 1.03, 1.06), h200),
            "≥1.03×: not shown (interval spans target)");  // a low end on the target is no margin
  EXPECT_EQ(target_cell(square, figures_of(1.06, 1.04, 1.08), h200), "≥1.03×: met");
  EXPECT_EQ(target_cell(square, figures_of(0.99, 0.97, 1.01), h200), "≥1.03×: missed");
  EXPECT_EQ(target_cell(square, figures_of(1.05, std::nullopt, std::nullopt), h200),
            "≥1.03×: not shown (no interval)");
  EXPECT_EQ(target_cell(square, figures_of(1.0, std::nullopt, std::nullopt), h200),
            "≥1.03×: missed");
  EXPECT_EQ(target_cell(square, GemmFigures{}, h200), "≥1.03×: no result");

  const GemmShape skinny{16, 4096, 7168};
  EXPECT_EQ(target_cell(skinny, figures_of(1.5, 1.4, 1.6, 0.9), h200), "≥1.2×, ≥85% BW: met");
  EXPECT_EQ(target_cell(skinny, figures_of(1.5, 1.4, 1.6, 0.8), h200), "≥1.2×, ≥85% BW: missed");
  EXPECT_EQ(target_cell(skinny, figures_of(1.5, 1.4, 1.6), h200), "≥1.2×, ≥85% BW: missed");
  EXPECT_EQ(target_cell(skinny, figures_of(1.21, 1.18, 1.24, 0.9), h200),
            "≥1.2×, ≥85% BW: not shown (interval spans target)");
  EXPECT_EQ(target_cell(skinny, figures_of(1.5, 1.4, 1.6, 0.9), "NVIDIA H100 80GB HBM3"), "—");
  EXPECT_EQ(target_cell({128, 4096, 7168}, figures_of(1.05, 1.02, 1.08), h200), "≥1.0×: met");
  EXPECT_EQ(target_cell({2048, 2048, 2048}, figures_of(1.5, 1.4, 1.6), h200), "—");
}

TEST(GemmReport, SpreadOfTheRatioOverRuns) {
  GemmRepeat no_result;
  no_result.note = "job failed";
  const std::vector<GemmRepeat> runs = {repeat_with_ratio(1, 1.00), repeat_with_ratio(2, 1.02),
                                        no_result, repeat_with_ratio(3, 0.98)};
  const auto spread = ratio_spread(runs);
  ASSERT_TRUE(spread);
  EXPECT_EQ(spread->runs, 3);  // the run without a ratio does not count
  EXPECT_DOUBLE_EQ(spread->median, 1.00);
  EXPECT_DOUBLE_EQ(spread->min, 0.98);
  EXPECT_DOUBLE_EQ(spread->max, 1.02);
  EXPECT_NEAR(spread->spread, 0.04, 1e-12);
  EXPECT_FALSE(ratio_spread({repeat_with_ratio(1, 1.0), no_result}));
  EXPECT_FALSE(ratio_spread({}));
}

TEST(GemmReport, BaselineNameAndAlgorithm) {
  EXPECT_EQ(baseline_name(cublaslt_baseline()), "cublasLt best of 8 (32 MiB ws)");
  EXPECT_EQ(baseline_algorithm_text(cublaslt_baseline()),
            "algo 2 of 8 (id 66, tile 21, stages 14, split-K 1)");
  EXPECT_EQ(baseline_name(nullptr), "baseline (not described)");
  EXPECT_EQ(baseline_algorithm_text(nullptr), "—");
  EXPECT_EQ(baseline_name({{"kind", "cublas_gemm"}, {"note", "reference run"}}), "cublas_gemm");
  EXPECT_EQ(baseline_algorithm_text({{"kind", "cublas_gemm"}}), "—");
}

TEST(GemmReport, RatioCell) {
  EXPECT_EQ(ratio_cell(figures_of(1.0234, 0.991, 1.044)), "1.02× [0.99, 1.04]");
  EXPECT_EQ(ratio_cell(figures_of(1.0234, std::nullopt, std::nullopt)), "1.02× (no interval)");
  EXPECT_EQ(ratio_cell(GemmFigures{}), "—");
}

TEST(GemmReport, TableNamesTheBaselineAndShowsIntervalsSpreadTargetsAndNotes) {
  const std::string table = render_gemm_table(sample_report(), "bench/results/x/");
  EXPECT_NE(table.find("### bf16 GEMM against cublasLt best of 8 (32 MiB ws) on NVIDIA H100 "
                       "80GB HBM3 (driver 580.159.04), 2026-11-23"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Baseline: cublasLt 130100 with a 32 MiB workspace, the fastest of its "
                       "heuristic's top 8 algorithms"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("in the same job on the same GPU; ratio = baseline / ours with a bootstrap "
                       "95% interval"),
            std::string::npos);
  EXPECT_NE(table.find("3000 GB/s"), std::string::npos);
  EXPECT_NE(
      table.find("| M×N×K | our best config | ours | cublasLt best of 8 (32 MiB ws) | ratio "
                 "(95% interval) | answer | run-to-run spread | baseline algorithm | TFLOP/s |"),
      std::string::npos)
      << table;
  EXPECT_NE(
      table.find("| 4096×4096×4096 | `wgmma_ws` BM=128 BN=256 | 160.0 µs | 176.0 µs | 1.10× "
                 "[1.08, 1.12] | ours | 2.7% (1.09–1.12×, 3 runs) | algo 2 of 8 (id 66, tile 21, "
                 "stages 14, split-K 1) | 859.0 | "),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("≥1.03×: met"), std::string::npos);
  // 64x4096x7168: 1.17x [1.15, 1.18]; its targets are the H200's, and this is an H100
  EXPECT_NE(table.find("| 1.17× [1.15, 1.18] | ours | — | algo 2 of 8"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("≥1.2×"), std::string::npos);
  EXPECT_NE(
      table.find("| 8192×8192×8192 | — | — | — | — | — | — | — | — | — | ≥1.03×: no result | 0 "
                 "| 0 s |"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("- 8192×8192×8192: skipped"), std::string::npos);
  EXPECT_NE(table.find("- 4096×4096×4096, run 3 (job 9): won with `wgmma_ws` BM=128 BN=128"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Raw output: [bench/results/x/](bench/results/x/)"), std::string::npos);
}

TEST(GemmReport, NoSpreadColumnWithOneRunPerShape) {
  GemmReport report = sample_report();
  report.rows[0].repeats.resize(1);
  const std::string table = render_gemm_table(report);
  EXPECT_EQ(table.find("run-to-run spread"), std::string::npos) << table;
  EXPECT_NE(table.find("| 1.10× [1.08, 1.12] | ours | algo 2 of 8"), std::string::npos) << table;
}

TEST(GemmReport, ConfigText) {
  EXPECT_EQ(config_text(nullptr), "—");
  EXPECT_EQ(config_text({{"BM", 64}, {"template", "t"}, {"BK", 32}}), "`t` BK=32 BM=64");
}

}  // namespace
}  // namespace kt::bench

namespace kt::bench {
namespace {

GemmRow model_row(GemmShape shape, double ratio, double low, double high) {
  GemmRow row;
  row.shape = shape;
  row.shape.set = kModelsSet;
  row.ours_us = 100.0;
  row.baseline_us = 100.0 * ratio;
  row.ratio = ratio;
  row.ratio_low = low;
  row.ratio_high = high;
  row.baseline = {{"kind", "cublaslt_gemm"}};
  row.config = {{"template", "wgmma_tma_ws"}, {"BM", 128}};
  return row;
}

// Issue 14: each row says who answers (the daemon's rule), and the model set's geometric means.
TEST(GemmReport, AnswersAndTheModelSetGeomean) {
  GemmReport report;
  report.rows.push_back(model_row({4096, 96, 4096}, 1.10, 1.08, 1.12));
  report.rows.push_back(model_row({16, 4096, 4097}, 0.90, 0.89, 0.91));
  report.rows.push_back(model_row({777, 4096, 4096}, 1.01, 0.99, 1.03));  // a tie: baseline
  GemmRow none;
  none.shape = {1, 11008, 4096};
  none.shape.set = kModelsSet;
  none.baseline_us = 30.0;
  none.baseline = {{"kind", "cublaslt_gemm"}};
  report.rows.push_back(none);
  const GemmSummary s = gemm_summary(report);
  EXPECT_EQ(s.model_rows, 4);
  EXPECT_EQ(s.model_ours, 1);
  EXPECT_EQ(s.model_baseline, 3);
  EXPECT_EQ(s.model_ours_below_one, 1);
  ASSERT_TRUE(s.models_ours && s.models_answer);
  EXPECT_EQ(s.models_ours->rows, 3);
  EXPECT_NEAR(s.models_ours->value, std::cbrt(1.10 * 0.90 * 1.01), 1e-12);
  EXPECT_EQ(s.models_answer->rows, 4);
  EXPECT_NEAR(s.models_answer->value, std::pow(1.10, 0.25), 1e-12);
  EXPECT_NEAR(s.models_answer->low, std::pow(1.08, 0.25), 1e-12);
  EXPECT_EQ(models_target_status(*s.models_answer), "missed");
  EXPECT_EQ(models_target_status({1.10, 1.06, 1.12, 2}), "met");
  EXPECT_EQ(models_target_status({1.06, 1.04, 1.08, 2}), "not shown (interval spans target)");
  // No per-row target for model shapes, even the decode-like ones on an H200.
  EXPECT_FALSE(shape_target(report.rows[1].shape, "NVIDIA H200").has_value());

  const nlohmann::json j = gemm_report_to_json(report);
  EXPECT_EQ(j["rows"][0]["answer"], "ours");
  EXPECT_EQ(j["rows"][0]["answer_template"], "wgmma_tma_ws");
  EXPECT_EQ(j["rows"][1]["answer"], "baseline");
  EXPECT_EQ(j["rows"][1]["answer_template"], "cublas");
  EXPECT_EQ(j["rows"][3]["answer"], "baseline");
  EXPECT_EQ(j["rows"][0]["set"], "models");
  EXPECT_EQ(j["summary"]["models"]["ours"], 1);
  EXPECT_EQ(j["summary"]["models"]["target_status"], "missed");
  EXPECT_EQ(gemm_report_from_json(j).rows[1].shape.set, "models");

  const std::string table = render_gemm_table(report);
  EXPECT_NE(table.find("| 0.90× [0.89, 0.91] | cuBLAS |"), std::string::npos) << table;
  EXPECT_NE(table.find("our kernels in 1 of 4 rows, the baseline in 3"), std::string::npos)
      << table;
  EXPECT_NE(table.find("target ≥1.05×: missed"), std::string::npos) << table;
}

TEST(GemmReport, Fp8RowsCountOneByteOperandsAndCarryTheirTargets) {
  GemmReport report;
  report.device = "NVIDIA H200";
  report.date = "2026-12-02";
  report.copy_gbps = 4000;
  report.scaling = "block";
  GemmRow row;
  row.shape = {64, 2112, 7168, 48, 45, "fp8"};
  row.dtype = "e4m3";
  row.ours_us = 10;
  row.baseline_us = 12;
  row.ratio = 1.2;
  row.ratio_low = 1.15;
  row.ratio_high = 1.25;
  report.rows.push_back(row);
  const GemmFigures figures = gemm_figures(row, report.copy_gbps);
  // (64*7168 + 2112*7168) bytes + 2*64*2112 bytes in 10 us against 4000 GB/s.
  const double bytes = (64.0 * 7168 + 2112.0 * 7168) + 2.0 * 64 * 2112;
  ASSERT_TRUE(figures.bw_fraction.has_value());
  EXPECT_NEAR(*figures.bw_fraction, bytes / 10e-6 / 4000e9, 1e-9);
  const auto target = shape_target(row.shape, report.device);
  ASSERT_TRUE(target.has_value());
  EXPECT_DOUBLE_EQ(target->min_ratio, 1.1);
  EXPECT_EQ(target->min_bw_fraction, 0.8);
  EXPECT_DOUBLE_EQ(shape_target({4096, 4096, 4096, 24, 60, "fp8"}, "NVIDIA H100")->min_ratio, 1.0);
  EXPECT_EQ(gemm_report_from_json(gemm_report_to_json(report)).scaling, "block");
  const std::string table = render_gemm_table(report);
  EXPECT_NE(table.find("### e4m3 GEMM (1x128 and 128x128 block scales)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("fp8 bytes + 2·M·N bf16 bytes"), std::string::npos) << table;
}

TEST(GemmShapeSets, NamedSetsCarryBudgetsAndTimeouts) {
  const auto models = gemm_shape_set("models");
  ASSERT_EQ(models.size(), 10u);
  EXPECT_EQ(models[1], (GemmShape{4096, 32001, 4096, 12, 150, "models"}));
  for (const GemmShape& shape : models) {
    EXPECT_GT(shape.budget, 0);
    EXPECT_GT(shape.timeout_seconds, 0);
  }
  EXPECT_EQ(gemm_shape_set("square").size(), 9u);
  EXPECT_EQ(gemm_shape_set("square")[0].budget, 32);
  EXPECT_EQ(gemm_shape_set("all").size(), 19u);
  const auto fp8 = gemm_shape_set("fp8");
  ASSERT_EQ(fp8.size(), 20u) << "DeepGEMM's 18 dense shapes, 4096^3 and 8192^3";
  EXPECT_EQ(fp8[0], (GemmShape{64, 2112, 7168, 48, 45, "fp8"}));
  for (const GemmShape& shape : fp8) EXPECT_EQ(shape.k % 16, 0) << "fp8 rows are 16-byte pitched";
  EXPECT_THROW(gemm_shape_set("llama"), std::invalid_argument);
  const GemmShape parsed = parse_shape_label("16x4096x4097:32:45");
  EXPECT_EQ(parsed.budget, 32);
  EXPECT_EQ(parsed.timeout_seconds, 45);
  EXPECT_THROW(parse_shape_label("16x4096x4097:32:0"), std::invalid_argument);
}

}  // namespace
}  // namespace kt::bench
