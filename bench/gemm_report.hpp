// The GEMM benchmark's result: one row per shape with our best variant next to
// the family's baseline (cublasLt, the best of its heuristic's top algorithms), both taken from the
// job's final comparison (interleaved, same worker process, same GPU), the ratio with its
// bootstrap 95% interval, and with --repeat the same comparison run again in separate jobs.
// Written as the JSON of bench/results/gemm-latest.json and as a Markdown table. The JSON holds
// the measured values; TFLOP/s, the bandwidth fraction, the run-to-run spread, each row's answer
// (ours or the baseline) and the summary are derived when it is written, so a table re-rendered
// from the JSON is the same table. Reports written before the interleaved final comparison
// ("cublas_us", no interval) still read and render.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result_names.hpp"

namespace kt::bench {

// One final comparison of a shape: the tuning job's, or a later job pinned to its candidates.
struct GemmRepeat {
  std::int64_t job_id = 0;
  std::optional<double> ours_us;                       // the winner's interleaved median
  std::optional<double> baseline_us;                   // the baseline's, same rounds
  std::optional<double> ratio, ratio_low, ratio_high;  // baseline / ours, 95% interval
  nlohmann::json config;  // the winner {"template": name, axis: value, ...}; null if none
  std::string note;       // why the run is incomplete; "" = none
};

struct GemmRow {
  GemmShape shape;
  std::string dtype = "bf16";
  nlohmann::json config;  // {"template": name, axis: value, ...}; null when nothing was measured
  std::optional<double> ours_us;      // final comparison median (first pass when there was none)
  std::optional<double> baseline_us;  // the baseline's median from the same samples
  // baseline / ours as the daemon computed it, with its bootstrap 95% interval; without an
  // interval (first-pass figures, old reports) the ratio is derived from the two medians.
  std::optional<double> ratio, ratio_low, ratio_high;
  // What the baseline was, as the daemon describes it ({"kind":"cublaslt_gemm",
  // "heuristic_algorithms", "algorithm_index", "algorithm":{...}, ...}); null when unknown.
  nlohmann::json baseline;
  std::optional<double> first_pass_us;  // the winner's first-pass median
  std::int64_t variants_measured = 0;
  double tuning_seconds = 0;
  std::vector<GemmRepeat> repeats;  // every final comparison run for the shape, first = tuning job
  std::string note;  // why a row is incomplete (job failed, skipped, cut short); "" = none
};

struct GemmReport {
  std::string device;
  std::string driver;
  std::string date;     // YYYY-MM-DD
  std::string scaling;  // fp8 (family gemm_fp8): "tensor" or "block"; "" = a 16-bit GEMM
  std::optional<double> copy_gbps;
  std::vector<GemmRow> rows;
};

// What a shape's target is on a device: baseline / ours at least min_ratio (4096^3 and 8192^3
// on every GPU: 1.03) and, for the decode shapes on an H200, at least min_bw_fraction of the copy
// bandwidth (M <= 64 x 4096 x 7168: 1.2 and 85%; M = 128: 1.0). nullopt: no target for that shape
// there (every shape of the "models" set: its target is over the whole set, see GemmSummary).
struct GemmTarget {
  double min_ratio = 1.0;
  std::optional<double> min_bw_fraction;
};
std::optional<GemmTarget> shape_target(const GemmShape& shape, const std::string& device);

// Issue 14's target for the "models" set: the geometric mean of the answer's ratio.
inline constexpr double kModelsGeomeanTarget = 1.05;

// Spread of the ratio over the runs of a shape: (max - min) / median.
struct RatioSpread {
  int runs = 0;
  double min = 0, max = 0, median = 0;
  double spread = 0;
};
// Over the repeats that have a ratio; nullopt with fewer than two.
std::optional<RatioSpread> ratio_spread(const std::vector<GemmRepeat>& repeats);

// Derived figures of a row; nullopt where an input is missing.
struct GemmFigures {
  std::optional<double> ratio, ratio_low, ratio_high, tflops, bw_fraction;
  std::optional<RatioSpread> spread;
};
GemmFigures gemm_figures(const GemmRow& row, std::optional<double> copy_gbps);

// Who a user should call for the row's shape, by the daemon's rule (tuner/baseline_verdict.hpp):
// ours only when shown faster than the baseline (the interval's low end above 1; without an
// interval, a ratio above 1), the baseline when it is not or when no variant was measured;
// unknown with neither figure.
enum class GemmAnswer { unknown, ours, baseline };
GemmAnswer gemm_answer(const GemmRow& row, const GemmFigures& figures);
// "ours", "baseline" or "" (unknown), as the JSON writes it.
std::string gemm_answer_name(GemmAnswer answer);

// A geometric mean of ratios with the geometric means of the rows' interval ends (every row at
// its low end at once: a conservative bound, not a joint 95% interval).
struct RatioGeomean {
  double value = 0, low = 0, high = 0;
  int rows = 0;
};

// How many rows each side answers, and the figures over the rows of the "models" set.
struct GemmSummary {
  int rows = 0, ours = 0, baseline = 0, unknown = 0;
  int model_rows = 0, model_ours = 0, model_baseline = 0, model_unknown = 0;
  int model_ours_below_one = 0;  // model rows whose best variant's ratio is below 1.0
  // Our best variant's ratio over the model rows that have an interval.
  std::optional<RatioGeomean> models_ours;
  // The answer's ratio over the model rows with an answer: ours where it wins, exactly 1.0 where
  // the baseline is the answer (the user calls the baseline itself).
  std::optional<RatioGeomean> models_answer;
};
GemmSummary gemm_summary(const GemmReport& report);
// The target for the models' answer geomean: "met" only when its low end clears
// kModelsGeomeanTarget, "missed" when its high end is below it, else "not shown (interval spans
// target)".
std::string models_target_status(const RatioGeomean& answer);

// The target cell: "≥1.2×, ≥85% BW: met". Met only when the interval's low end is above the
// target ratio (and the bandwidth part holds); missed when its high end is below it or the
// bandwidth part fails; "not shown (interval spans target)" in between; without an interval a
// ratio at or above the target is "not shown (no interval)". "—" for a shape without a target.
std::string target_cell(const GemmShape& shape, const GemmFigures& figures,
                        const std::string& device);

// The baseline in a few words: "cublasLt best of 8 (32 MiB ws)"; "baseline (not described)" for
// null.
std::string baseline_name(const nlohmann::json& baseline);
// The chosen algorithm: "algo 2 of 8 (id 66, tile 21, stages 14, split-K 1)"; "—" when the
// baseline has none.
std::string baseline_algorithm_text(const nlohmann::json& baseline);

// {"device","driver","date","copy_gbps","rows":[{"shape":"MxNxK","dtype","config","ours_us",
// "baseline_us","ratio","ratio_low","ratio_high","baseline","first_pass_us","tflops",
// "bw_fraction","variants_measured","tuning_seconds","answer","answer_template","repeats":
// [{"job_id","ours_us","baseline_us","ratio","ratio_low","ratio_high","config"[,"note"]}],
// "ratio_spread"}],"summary":{...}}; a row with a note also has "note", one of a named set
// "set". "answer" is "ours", "baseline" or null; "answer_template" our template or, when the
// baseline answers, "cublas" (for a cuBLAS kind; else its kind). Unknown numbers are null.
nlohmann::json gemm_report_to_json(const GemmReport& report);
// Inverse of gemm_report_to_json (derived fields are recomputed, not read); also reads reports
// written before the interleaved final comparison ("cublas_us": cublasGemmEx with its default
// heuristic, no interval). Throws std::invalid_argument naming the bad field.
GemmReport gemm_report_from_json(const nlohmann::json& j);

// "`wgmma_ws` BM=128 BN=256 BK=64 ..." (template first, then the axes by name); "—" for null.
std::string config_text(const nlohmann::json& config);

// "1.02× [0.99, 1.04]", "1.02× (no interval)", "—".
std::string ratio_cell(const GemmFigures& figures);

// A heading with the baseline, device, driver and date, what the figures are, the table (with a
// run-to-run spread column when a shape ran more than once) and notes; with raw_output (a
// folder), a line that links to it.
std::string render_gemm_table(const GemmReport& report, const std::string& raw_output = "");

}  // namespace kt::bench
