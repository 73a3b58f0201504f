// The GEMM benchmark's result (issue 4): one row per shape with our best variant and cuBLAS timed
// in the same tuning job, as the JSON of bench/results/gemm-latest.json and as a Markdown table.
// The JSON holds the measured values; ratio, TFLOP/s and the bandwidth fraction are derived from
// them when it is written, so a table re-rendered from the JSON is the same table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result_names.hpp"

namespace kt::bench {

struct GemmRow {
  GemmShape shape;
  std::string dtype = "bf16";
  nlohmann::json config;  // {"template": name, axis: value, ...}; null when nothing was measured
  std::optional<double> ours_us;
  std::optional<double> cublas_us;  // the job's reference_us
  std::int64_t variants_measured = 0;
  double tuning_seconds = 0;
  std::string note;  // why a row is incomplete (job failed, skipped, cut short); "" = none
};

struct GemmReport {
  std::string device;
  std::string driver;
  std::string date;  // YYYY-MM-DD
  std::optional<double> copy_gbps;
  std::vector<GemmRow> rows;
};

// What issue 4 asks of a shape: cuBLAS / ours at least min_ratio and, for the memory-bound skinny
// shapes, at least min_bw_fraction of the copy bandwidth. nullopt: no target for that shape.
struct GemmTarget {
  double min_ratio = 1.0;
  std::optional<double> min_bw_fraction;
};
std::optional<GemmTarget> issue4_target(const GemmShape& shape);

// Derived figures of a row; nullopt where an input is missing.
struct GemmFigures {
  std::optional<double> ratio, tflops, bw_fraction;
};
GemmFigures gemm_figures(const GemmRow& row, std::optional<double> copy_gbps);

// {"device","driver","date","copy_gbps","rows":[{"shape":"MxNxK","dtype","config","ours_us",
// "cublas_us","ratio","tflops","bw_fraction","variants_measured","tuning_seconds"}]}; a row
// with a note also has "note". Unknown numbers are null.
nlohmann::json gemm_report_to_json(const GemmReport& report);
// Inverse of gemm_report_to_json (derived fields are recomputed, not read); throws
// std::invalid_argument naming the bad field.
GemmReport gemm_report_from_json(const nlohmann::json& j);

// "`wgmma_ws` BM=128 BN=256 BK=64 ..." (template first, then the axes by name); "—" for null.
std::string config_text(const nlohmann::json& config);

// A heading with device, driver and date, the copy bandwidth, the table and notes; with
// raw_output (a folder), a line that links to it.
std::string render_gemm_table(const GemmReport& report, const std::string& raw_output = "");

}  // namespace kt::bench
