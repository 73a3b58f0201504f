// kt-gemm-bench (issue 4): tunes each shape through the real daemon, one job per shape, and
// reports our best variant next to cuBLAS timed in the same job, with the device's measured copy
// bandwidth. Options, the row a finished job gives, and the run itself.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/gemm_report.hpp"
#include "bench/job_driver.hpp"

namespace kt::bench {

struct GemmBenchOptions {
  std::string server = "http://127.0.0.1:8080";
  std::int64_t budget = 0;  // per shape (0 = all), unless the shape names one ("MxNxK:BUDGET")
  std::vector<std::string> shape_texts;  // "" = issue4_shapes()
  std::string dtype = "bf16";
  std::string device;               // daemon device selector; "" = its first GPU
  std::filesystem::path copy_json;  // kt-copy-bandwidth output to read instead of running it
  double copy_gbps = 0;             // > 0: use this instead of measuring
  std::filesystem::path out_dir;    // "" = bench/results/<date>-<device>-gemm
  std::filesystem::path latest = "bench/results/gemm-latest.json";  // "" = no copy
  std::filesystem::path readme;                                     // "" = leave the README alone
  std::filesystem::path from_json;  // re-render this report; no daemon, no GPU
  double deadline_seconds = 0;      // 0 = none; later shapes are skipped once it has passed
  double job_timeout_seconds = 0;   // 0 = none; a job past it is cancelled (best so far kept)
  int poll_ms = 1000;
  std::string compile_only_arch;  // dry run without a GPU: compile-only jobs, nothing timed

  std::vector<GemmShape> shapes;  // filled by finish_gemm_bench_options
};

// Declares the options on app (CLI11), writing into options.
void add_gemm_bench_options(CLI::App& app, GemmBenchOptions& options);
// Checks what CLI11 cannot and parses the shapes; throws std::invalid_argument.
void finish_gemm_bench_options(GemmBenchOptions& options);

// The row of one finished (or cut-short, failed, cancelled) job.
GemmRow gemm_row_from_job(const GemmShape& shape, const std::string& dtype, const JobRun& run);

// What the report needs of kt-copy-bandwidth's JSON output.
struct CopyBandwidthInfo {
  double gbps = 0;
  std::string device;
  std::string driver;
};
// Throws std::invalid_argument if "gbps" is missing or not positive.
CopyBandwidthInfo copy_bandwidth_from_json(const nlohmann::json& j);

// Runs every shape (or reads options.from_json), writes <out_dir>/table.md and
// <out_dir>/gemm.json after every shape, the latest copy and the README section at the end.
// Progress goes to log. Returns the process exit code: 1 when no shape got a measured variant
// (except for --from-json and --compile-only-arch), else 0.
int run_gemm_bench(const GemmBenchOptions& options, std::ostream& log);

}  // namespace kt::bench
