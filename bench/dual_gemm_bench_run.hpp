// kt-bench dual-gemm: tunes each grouped dual-GEMM shape through the real daemon, one
// dual_gemm_silu job per shape, and reports the job's final comparison: our best variant next to
// the unfused baseline (two cuBLASLt GEMMs per group and the SiLU-multiply kernel) re-measured
// interleaved in the same job, the ratio with its 95% interval, TFLOP/s and the fraction of the
// measured copy bandwidth.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench_run_options.hpp"
#include "bench/dual_gemm_report.hpp"
#include "bench/job_driver.hpp"

namespace kt::bench {

struct DualGemmBenchOptions : BenchRunOptions {
  DualGemmBenchOptions() : BenchRunOptions("bench/results/dual-gemm-latest.json") {}

  std::vector<std::string> shape_texts;  // empty = default_dual_gemm_shapes()
  std::string dtype = "bf16";
  std::filesystem::path copy_json;
  double copy_gbps = 0;

  std::vector<DualGemmShape> shapes;  // filled by finish_dual_gemm_bench_options
};

void add_dual_gemm_bench_options(CLI::App& app, DualGemmBenchOptions& options);
// Parses the shapes; throws std::invalid_argument.
void finish_dual_gemm_bench_options(DualGemmBenchOptions& options);

// The row of one finished (or cut-short, failed) job.
DualGemmRow dual_gemm_row_from_job(const DualGemmShape& shape, const std::string& dtype,
                                   const JobRun& run);

// Runs every shape (or re-renders options.from_json), writing <out_dir>/table.md and
// dual-gemm.json after every job, the latest copy and the document's table at the end. Returns 1
// when no shape got a measured variant (except re-render and compile-only runs), else 0.
int run_dual_gemm_bench(const DualGemmBenchOptions& options, std::ostream& log);

}  // namespace kt::bench
