#include "bench/attention_report.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/attention_bench_run.hpp"

namespace kt::bench {
namespace {

TEST(AttentionShapes, LabelsKeysAndTheIssueShapes) {
  const AttentionShape causal = parse_attention_shape("4x16x4096x128c:8");
  EXPECT_EQ(causal, (AttentionShape{4, 16, 4096, 128, true, 8}));
  EXPECT_EQ(attention_shape_label(causal), "4x16x4096x128");
  EXPECT_EQ(attention_shape_key(causal), "4x16x4096x128c");
  EXPECT_EQ(parse_attention_shape("1x1x128x64"), (AttentionShape{1, 1, 128, 64, false, -1}));
  for (const char* bad : {"1x1x128", "1x1x128x64x2", "1x1x128x64d", "0x1x128x64", "c", ""})
    EXPECT_THROW(parse_attention_shape(bad), std::invalid_argument) << bad;
  const auto shapes = default_attention_shapes();
  ASSERT_EQ(shapes.size(), 11u);
  EXPECT_EQ(shapes[0], (AttentionShape{1, 1, 128, 64}));
  EXPECT_EQ(shapes[9], (AttentionShape{4, 16, 4096, 128, true}));
}

TEST(AttentionFigures, TflopsAndTargets) {
  // 4·B·H·S²·D: 4·4·16·4096²·128 = 549.8 GFLOP; causal does half.
  EXPECT_NEAR(attention_tflops({4, 16, 4096, 128}, 1000), 549.76, 0.01);
  EXPECT_NEAR(attention_tflops({4, 16, 4096, 128, true}, 1000), 274.88, 0.01);
  EXPECT_EQ(attention_target_ratio({1, 1, 128, 64}), 1.0);
  EXPECT_EQ(attention_target_ratio({2, 16, 8192, 128}), 1.0);
  EXPECT_EQ(attention_target_ratio({4, 16, 4096, 128, true}), 0.95);
  EXPECT_EQ(attention_target_ratio({4, 16, 4096, 64}), 0.95);
  AttentionRow row;
  row.shape = {4, 16, 4096, 64};
  row.ratio = 0.97;
  row.ratio_low = 0.96;
  row.ratio_high = 0.98;
  EXPECT_EQ(attention_target_cell(row), "≥0.95×: met");
}

// What bench/sdpa_baseline.py writes for two shapes: one compared, one without a passing
// candidate.
nlohmann::json sdpa_output() {
  return nlohmann::json::parse(R"({
    "device": "NVIDIA H100 80GB HBM3", "driver": "CUDA driver 13000", "torch": "2.11.0",
    "error": null,
    "shapes": [
      {"key": "1x1x128x64", "dtype": "bf16", "error": null, "timing": "graph",
       "graph_launches": 12, "rounds": 30,
       "sdpa": {"flash": {"median_us": 9.0}, "cudnn": {"error": "not supported"},
                "default": {"median_us": 8.5}},
       "sdpa_backend": "default", "sdpa_us": 8.5, "ours_us": 6.8,
       "best": {"variant_id": 5, "config": {"template": "mma_flash2", "BLOCK_M": 64},
                "median_us": 6.8},
       "max_abs_error": 0.0039, "ratio": 1.25, "ratio_low": 1.2, "ratio_high": 1.3},
      {"key": "4x16x4096x128c", "dtype": "fp16",
       "error": "no candidate passed the output check against SDPA"}
    ]})");
}

AttentionReport report_with_jobs() {
  AttentionReport report;
  report.date = "2026-11-26";
  AttentionRow small;
  small.shape = {1, 1, 128, 64};
  small.job_us = 7.1;
  small.job_id = 1;
  small.variants_measured = 20;
  small.tuning_seconds = 30;
  small.config = {{"template", "mma_flash2"}, {"BLOCK_M", 128}};
  AttentionRow causal;
  causal.shape = {4, 16, 4096, 128, true};
  causal.dtype = "fp16";
  causal.job_us = 900;
  causal.job_id = 2;
  AttentionRow untuned;
  untuned.shape = {4, 16, 4096, 64};
  untuned.note = "job failed: no GPU; no variant measured";
  AttentionRow missing;
  missing.shape = {1, 8, 512, 64};
  missing.job_us = 20;
  report.rows = {small, causal, untuned, missing};
  return report;
}

TEST(AttentionReport, MergesTheSdpaScriptsOutput) {
  AttentionReport report = report_with_jobs();
  apply_sdpa_results(report, sdpa_output());
  EXPECT_EQ(report.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(report.torch, "2.11.0");
  const AttentionRow& small = report.rows[0];
  EXPECT_EQ(small.ours_us, 6.8);
  EXPECT_EQ(small.sdpa_us, 8.5);
  EXPECT_EQ(small.sdpa_backend, "default");
  EXPECT_EQ(small.sdpa_flash_us, 9.0);
  EXPECT_FALSE(small.sdpa_cudnn_us);
  EXPECT_EQ(small.ratio_low, 1.2);
  EXPECT_EQ(small.timing, "graph");
  EXPECT_EQ(small.graph_launches, 12);
  EXPECT_EQ(small.config.at("BLOCK_M"), 64);  // the script's winner, not the job's
  EXPECT_EQ(small.note, "");
  EXPECT_EQ(report.rows[1].note, "SDPA script: no candidate passed the output check against SDPA");
  EXPECT_FALSE(report.rows[1].ratio);
  EXPECT_EQ(report.rows[2].note, "job failed: no GPU; no variant measured");  // unchanged
  EXPECT_EQ(report.rows[3].note, "not in the SDPA script's output");
  EXPECT_THROW(apply_sdpa_results(report, nlohmann::json::array()), std::invalid_argument);
}

TEST(AttentionReport, JsonRoundTripRendersTheSameTable) {
  AttentionReport report = report_with_jobs();
  apply_sdpa_results(report, sdpa_output());
  const nlohmann::json j = attention_report_to_json(report);
  const nlohmann::json& row = j.at("rows")[0];
  EXPECT_EQ(row.at("shape"), "1x1x128x64");
  EXPECT_EQ(row.at("causal"), false);
  EXPECT_EQ(row.at("sdpa_backend"), "default");
  EXPECT_EQ(row.at("ratio"), 1.25);
  EXPECT_NEAR(row.at("tflops").get<double>(), attention_tflops({1, 1, 128, 64}, 6.8), 1e-12);
  EXPECT_EQ(j.at("rows")[1].at("causal"), true);
  EXPECT_TRUE(j.at("rows")[1].at("tflops").is_null());

  const AttentionReport back = attention_report_from_json(j);
  EXPECT_EQ(attention_report_to_json(back), j);
  const std::string table = render_attention_table(report);
  EXPECT_EQ(render_attention_table(back), table);
  EXPECT_NE(table.find("| 1×1×128×64 | no | bf16 | `mma_flash2` BLOCK_M=64 | 6.8 µs | 8.5 µs "
                       "(default) | 1.25× [1.20, 1.30] |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("graph of 12 launches | ≥1.00×: met | 7.1 µs | 20 | 30 s |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("- 4×16×4096×128 causal fp16: SDPA script"), std::string::npos);

  nlohmann::json bad = j;
  bad["rows"][0]["causal"] = 1;
  EXPECT_THROW(attention_report_from_json(bad), std::invalid_argument);
  bad = j;
  bad["rows"][0]["shape"] = "1x1x128";
  EXPECT_THROW(attention_report_from_json(bad), std::invalid_argument);
}

TEST(AttentionBenchOptions, DefaultsErrorsAndTheScriptCommand) {
  AttentionBenchOptions options;
  CLI::App app;
  add_attention_bench_options(app, options);
  // CLI11 takes a vector of arguments last-first.
  app.parse(std::vector<std::string>{"--sdpa-arg=--rounds=40", "fp16", "--dtype",
                                     "4x16x4096x128c:6", "--shape"});
  finish_attention_bench_options(options);
  EXPECT_EQ(options.latest, "bench/results/attention-latest.json");
  EXPECT_EQ(options.dtypes, std::vector<std::string>{"fp16"});
  ASSERT_EQ(options.shapes.size(), 1u);
  EXPECT_TRUE(options.shapes[0].causal);
  EXPECT_EQ(options.sdpa_args, std::vector<std::string>{"--rounds=40"});

  AttentionBenchOptions defaults;
  finish_attention_bench_options(defaults);
  EXPECT_EQ(defaults.shapes, default_attention_shapes());
  EXPECT_EQ(defaults.dtypes, (std::vector<std::string>{"bf16", "fp16"}));
  defaults.dtypes = {"fp32"};
  EXPECT_THROW(finish_attention_bench_options(defaults), std::invalid_argument);

  EXPECT_EQ(sdpa_command("python3", "bench/sdpa_baseline.py", "/w/l.json", "/w/o.json", 0, {}),
            "'python3' 'bench/sdpa_baseline.py' --launches '/w/l.json' --out '/w/o.json'");
  EXPECT_EQ(sdpa_command("python3", "s.py", "l", "o it's", 100, {"--rounds=40"}),
            "timeout -k 10 100 'python3' 's.py' --launches 'l' --out 'o it'\\''s' "
            "--deadline-s 85 '--rounds=40'");
}

}  // namespace
}  // namespace kt::bench
