// The dual-GEMM benchmark's result: one row per grouped shape with our best
// dual_gemm_silu variant next to the unfused baseline (per group two cuBLASLt GEMMs and the
// element-wise SiLU-multiply), both from the job's final comparison (interleaved, same worker
// process, same GPU), the ratio unfused / ours with its bootstrap 95% interval, TFLOP/s and the
// fraction of the copy bandwidth. Written as bench/results/dual-gemm-latest.json and a Markdown
// table; TFLOP/s and the bandwidth fraction are derived when written, so a table re-rendered from
// the JSON is the same table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt::bench {

inline constexpr const char* kDualGemmTableBegin = "<!-- dual-gemm-table:begin -->";
inline constexpr const char* kDualGemmTableEnd = "<!-- dual-gemm-table:end -->";

struct DualGemmShape {
  std::int64_t g = 0, m = 0, n = 0, k = 0;
  std::int64_t budget = -1;  // -1 = the run's default budget
  bool operator==(const DualGemmShape&) const = default;
};

// "GxMxNxK" (e.g. "8x64x4096x7168").
std::string dual_shape_label(const DualGemmShape& shape);
// "GxMxNxK" or "GxMxNxK:BUDGET"; throws std::invalid_argument on anything else.
DualGemmShape parse_dual_shape_label(const std::string& text);
// The default shapes: G=8 N=4096 K=7168 M in {64,128,256}; G=8 N=7168 K=2048 M=128;
// G=2 N=3072 K=4096 M in {192,320}; G=2 N=4096 K=1536 M in {128,384}.
std::vector<DualGemmShape> default_dual_gemm_shapes();

struct DualGemmRow {
  DualGemmShape shape;
  std::string dtype = "bf16";
  nlohmann::json config;  // {"template": name, axis: value, ...}; null when nothing was measured
  std::optional<double> ours_us;     // final comparison median (first pass when there was none)
  std::optional<double> unfused_us;  // the unfused baseline's median, same rounds
  std::optional<double> ratio, ratio_low, ratio_high;  // unfused / ours, 95% interval
  std::optional<double> first_pass_us;
  nlohmann::json baseline;  // the baseline as the daemon describes it; null when unknown
  std::int64_t variants_measured = 0;
  double tuning_seconds = 0;
  std::int64_t job_id = 0;
  std::string note;  // why a row is incomplete; "" = none
};

struct DualGemmReport {
  std::string device;
  std::string driver;
  std::string date;  // YYYY-MM-DD
  std::optional<double> copy_gbps;
  std::vector<DualGemmRow> rows;
};

// The bandwidth floor: A, B1 and B2 read once, C written once, in bytes.
double dual_gemm_min_bytes(const DualGemmShape& shape, int element_bytes);
// 4·G·M·N·K / time (two GEMMs), in TFLOP/s.
double dual_gemm_tflops(const DualGemmShape& shape, double us);

struct DualGemmFigures {
  std::optional<double> ratio, ratio_low, ratio_high, tflops, bw_fraction;
};
// The ratio comes from the row (no interval: unfused / ours from the medians).
DualGemmFigures dual_gemm_figures(const DualGemmRow& row, std::optional<double> copy_gbps);

// The targets: G=8 M=256 N=4096 K=7168 at least 1.25× the unfused path; M=64 at least 90%
// of the bandwidth floor. nullopt: no target for that shape.
struct DualGemmTarget {
  std::optional<double> min_ratio;
  std::optional<double> min_bw_fraction;
};
std::optional<DualGemmTarget> dual_gemm_target(const DualGemmShape& shape);
// "≥1.25×: met", "≥90% BW: missed", "—".
std::string dual_target_cell(const DualGemmShape& shape, const DualGemmFigures& figures);

// {"device","driver","date","copy_gbps","rows":[{"shape":"GxMxNxK","dtype","config","ours_us",
// "unfused_us","ratio","ratio_low","ratio_high","tflops","bw_fraction","variants_measured",
// "tuning_seconds","first_pass_us","baseline","job_id"[,"note"]}]}; unknown numbers are null.
nlohmann::json dual_gemm_report_to_json(const DualGemmReport& report);
// Inverse (derived fields recomputed). Throws std::invalid_argument naming the bad field.
DualGemmReport dual_gemm_report_from_json(const nlohmann::json& j);

// Heading (device, driver, date), what the figures are, the table and notes; with raw_output, a
// line that links to it.
std::string render_dual_gemm_table(const DualGemmReport& report,
                                   const std::string& raw_output = "");

}  // namespace kt::bench
