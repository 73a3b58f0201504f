// The attention benchmark's result: one row per (shape, causal, dtype) with our best
// attention_fwd variant next to PyTorch SDPA at its best, both timed by bench/sdpa_baseline.py in
// one process on the same GPU, interleaved round by round under one protocol (L2 flushed by a
// read before each trial, CUDA events, medians; CUDA graphs of many launches for launch-bound
// shapes); ratio = sdpa / ours with a bootstrap 95% interval. The tuning job's own figures (its
// final comparison in the worker) stay beside them. Written as
// bench/results/attention-latest.json and a Markdown table; TFLOP/s is derived when written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt::bench {

inline constexpr const char* kAttentionTableBegin = "<!-- attention-table:begin -->";
inline constexpr const char* kAttentionTableEnd = "<!-- attention-table:end -->";

struct AttentionShape {
  std::int64_t b = 0, h = 0, s = 0, d = 0;
  bool causal = false;
  std::int64_t budget = -1;  // -1 = the run's default budget
  bool operator==(const AttentionShape&) const = default;
};

// "BxHxSxD" (causal is a field of its own in the JSON).
std::string attention_shape_label(const AttentionShape& shape);
// "BxHxSxD", "BxHxSxDc" (causal), either with ":BUDGET"; throws std::invalid_argument.
AttentionShape parse_attention_shape(const std::string& text);
// "BxHxSxD" with a "c" when causal: the form parse_attention_shape reads and the key the SDPA
// script's results are matched by (with the dtype).
std::string attention_shape_key(const AttentionShape& shape);
// The default shapes: (1,1,128,64), (1,8,512,64), (2,8,128,64), S in {32,64,256,512} at B=1 H=1
// D=64, 4x16x4096x128 and 2x16x8192x128 non-causal, 4x16x4096x128 causal, 4x16x4096x64.
std::vector<AttentionShape> default_attention_shapes();

// 4·B·H·S²·D (half of it causal) / time, in TFLOP/s.
double attention_tflops(const AttentionShape& shape, double us);

struct AttentionRow {
  AttentionShape shape;
  std::string dtype = "bf16";
  nlohmann::json config;  // our winner in the SDPA script's comparison (else the job's); null
  std::optional<double> ours_us;  // the script's interleaved median of our best candidate
  std::optional<double> sdpa_us;  // SDPA at its best (the faster backend), same rounds
  std::string sdpa_backend;       // "flash", "cudnn" or "default" (PyTorch's own choice)
  std::optional<double> sdpa_flash_us, sdpa_cudnn_us, sdpa_default_us;
  std::optional<double> ratio, ratio_low, ratio_high;  // sdpa / ours, bootstrap 95% interval
  std::string timing;  // "events" (one launch per trial) or "graph" (a CUDA graph of N launches)
  std::int64_t graph_launches = 0;
  std::optional<double> max_abs_error;  // ours against SDPA's output, same inputs
  std::optional<double> job_us;         // the job's own final-comparison median (worker)
  std::int64_t variants_measured = 0;
  double tuning_seconds = 0;
  std::int64_t job_id = 0;
  std::string note;  // why a row is incomplete; "" = none
};

struct AttentionReport {
  std::string device;
  std::string driver;
  std::string date;   // YYYY-MM-DD
  std::string torch;  // torch version the SDPA script ran
  std::vector<AttentionRow> rows;
};

// The target ratio: 1.0 for the small launch-bound configs and the non-causal D=128
// shapes, 0.95 for causal and D=64 at S >= 4096.
double attention_target_ratio(const AttentionShape& shape);
std::string attention_target_cell(const AttentionRow& row);

// Merges the SDPA script's output ({"device","driver","torch","shapes":[...]}, see
// bench/sdpa_baseline.py) into the rows: matched by shape key and dtype; a row the script did not
// cover, or covered with an error, gets a note. Fills the report's device/driver/torch if empty.
void apply_sdpa_results(AttentionReport& report, const nlohmann::json& sdpa_output);

// {"device","driver","date","torch","rows":[{"shape":"BxHxSxD","causal","dtype","config",
// "ours_us","sdpa_us","sdpa_backend","ratio","ratio_low","ratio_high","tflops",
// "variants_measured","tuning_seconds","sdpa_flash_us","sdpa_cudnn_us","sdpa_default_us",
// "timing","graph_launches","max_abs_error","job_us","job_id"[,"note"]}]}
nlohmann::json attention_report_to_json(const AttentionReport& report);
// Inverse; throws std::invalid_argument naming the bad field.
AttentionReport attention_report_from_json(const nlohmann::json& j);

std::string render_attention_table(const AttentionReport& report,
                                   const std::string& raw_output = "");

}  // namespace kt::bench
