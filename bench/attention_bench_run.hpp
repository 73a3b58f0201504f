// kt-bench attention: tunes each attention shape (and dtype) through the real daemon,
// one attention_fwd job each, downloads each job's final-comparison candidates (cubins), writes
// their evaluated launches to the argument file of bench/sdpa_baseline.py and runs it: the script
// times our candidates interleaved with PyTorch SDPA in one process on the same GPU (see
// bench/attention_report.hpp). Rows, table, JSON, the latest copy and the document's table.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/attention_report.hpp"
#include "bench/bench_run_options.hpp"
#include "bench/job_driver.hpp"

namespace kt::bench {

struct AttentionBenchOptions : BenchRunOptions {
  AttentionBenchOptions() : BenchRunOptions("bench/results/attention-latest.json") {}

  std::vector<std::string> shape_texts;  // empty = default_attention_shapes()
  std::vector<std::string> dtypes = {"bf16", "fp16"};
  std::filesystem::path families;  // "" = the daemon's default location next to the program
  std::filesystem::path work_dir;  // cubins, argument file, script output; "" = a temp folder
  double sdpa_seconds = 120;       // kept for the SDPA script out of the deadline_seconds
  int candidates = 3;  // per shape: the job's final-comparison candidates timed against SDPA
  std::string python = "python3";
  std::filesystem::path sdpa_script;   // "" = bench/sdpa_baseline.py of this checkout
  std::vector<std::string> sdpa_args;  // passed on to the script (e.g. --rounds 30)

  std::vector<AttentionShape> shapes;  // filled by finish_attention_bench_options
};

void add_attention_bench_options(CLI::App& app, AttentionBenchOptions& options);
// Parses the shapes and checks the dtypes; throws std::invalid_argument.
void finish_attention_bench_options(AttentionBenchOptions& options);

// The row of one finished job before SDPA timing: the job's winner, its own median (job_us),
// counts, and a note for what is missing.
AttentionRow attention_row_from_job(const AttentionShape& shape, const std::string& dtype,
                                    const JobRun& run);

// The command line that runs the SDPA script (quoted for /bin/sh), stopped by `timeout` when it
// runs past seconds (0 = no limit).
std::string sdpa_command(const std::string& python, const std::filesystem::path& script,
                         const std::filesystem::path& launches, const std::filesystem::path& out,
                         double seconds, const std::vector<std::string>& extra_args);

// Runs everything (or re-renders options.from_json). Returns 1 when no row got an SDPA comparison
// (except re-render and compile-only runs), else 0.
int run_attention_bench(const AttentionBenchOptions& options, std::ostream& log);

}  // namespace kt::bench
