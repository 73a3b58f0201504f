#include "bench/gemm_report.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

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
  big.cublas_us = 176;
  big.variants_measured = 24;
  big.tuning_seconds = 41.6;
  GemmRow skinny;
  skinny.shape = {64, 4096, 7168};
  skinny.config = {{"template", "splitk"}, {"SPLIT_K", 4}};
  skinny.ours_us = 30;
  skinny.cublas_us = 35;
  skinny.variants_measured = 12;
  skinny.tuning_seconds = 9;
  GemmRow failed;
  failed.shape = {8192, 8192, 8192};
  failed.note = "skipped: the run's time limit (200 s) had passed";
  report.rows = {big, skinny, failed};
  return report;
}

TEST(GemmReport, JsonHasTheIssueFormatWithDerivedFigures) {
  const nlohmann::json j = gemm_report_to_json(sample_report());
  EXPECT_EQ(j.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j.at("driver"), "580.159.04");
  EXPECT_EQ(j.at("date"), "2026-11-23");
  EXPECT_EQ(j.at("copy_gbps"), 3000.0);
  ASSERT_EQ(j.at("rows").size(), 3u);
  const nlohmann::json& big = j.at("rows")[0];
  for (const char* key : {"shape", "dtype", "config", "ours_us", "cublas_us", "ratio", "tflops",
                          "bw_fraction", "variants_measured", "tuning_seconds"})
    EXPECT_TRUE(big.contains(key)) << key;
  EXPECT_FALSE(big.contains("note"));
  EXPECT_EQ(big.at("shape"), "4096x4096x4096");
  EXPECT_EQ(big.at("dtype"), "bf16");
  EXPECT_EQ(big.at("config").at("template"), "wgmma_ws");
  EXPECT_DOUBLE_EQ(big.at("ratio").get<double>(), 176.0 / 160.0);
  EXPECT_NEAR(big.at("tflops").get<double>(), 2.0 * 4096 * 4096 * 4096 / 160e-6 / 1e12, 1e-9);
  const double bytes = (4096.0 * 4096 * 3) * 2;
  EXPECT_NEAR(big.at("bw_fraction").get<double>(), bytes / 160e-6 / 1e9 / 3000, 1e-12);
  const nlohmann::json& failed = j.at("rows")[2];
  EXPECT_TRUE(failed.at("ours_us").is_null());
  EXPECT_TRUE(failed.at("ratio").is_null());
  EXPECT_TRUE(failed.at("config").is_null());
  EXPECT_EQ(failed.at("note"), "skipped: the run's time limit (200 s) had passed");
}

TEST(GemmReport, JsonRoundTripsToTheSameTable) {
  const GemmReport report = sample_report();
  const GemmReport back = gemm_report_from_json(gemm_report_to_json(report));
  EXPECT_EQ(gemm_report_to_json(back), gemm_report_to_json(report));
  EXPECT_EQ(render_gemm_table(back), render_gemm_table(report));
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
}

TEST(GemmReport, TargetsOfIssue4) {
  EXPECT_DOUBLE_EQ(issue4_target({8192, 8192, 8192})->min_ratio, 1.0);
  EXPECT_FALSE(issue4_target({4096, 4096, 4096})->min_bw_fraction);
  EXPECT_DOUBLE_EQ(issue4_target({128, 4096, 7168})->min_ratio, 1.3);
  EXPECT_DOUBLE_EQ(*issue4_target({1, 4096, 7168})->min_bw_fraction, 0.75);
  EXPECT_FALSE(issue4_target({2048, 2048, 2048}));
  EXPECT_FALSE(issue4_target({256, 7168, 2048}));
}

TEST(GemmReport, TableShowsRowsTargetsAndNotes) {
  const std::string table = render_gemm_table(sample_report(), "bench/results/x/");
  EXPECT_NE(table.find("NVIDIA H100 80GB HBM3 (driver 580.159.04), 2026-11-23"), std::string::npos);
  EXPECT_NE(table.find("3000 GB/s"), std::string::npos);
  EXPECT_NE(
      table.find("| 4096×4096×4096 | `wgmma_ws` BM=128 BN=256 | 160.0 µs | 176.0 µs | 1.10× | "
                 "859.0 | "),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("≥1.0×: met"), std::string::npos);
  // 64x4096x7168: 1.17x and under 75% of the copy bandwidth: missed
  EXPECT_NE(table.find("≥1.3×, ≥75% BW: missed"), std::string::npos);
  EXPECT_NE(table.find("| 8192×8192×8192 | — | — | — | — | — | — | ≥1.0×: no result | 0 | 0 s |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("- 8192×8192×8192: skipped"), std::string::npos);
  EXPECT_NE(table.find("Raw output: [bench/results/x/](bench/results/x/)"), std::string::npos);
}

TEST(GemmReport, ConfigText) {
  EXPECT_EQ(config_text(nullptr), "—");
  EXPECT_EQ(config_text({{"BM", 64}, {"template", "t"}, {"BK", 32}}), "`t` BK=32 BM=64");
}

}  // namespace
}  // namespace kt::bench
