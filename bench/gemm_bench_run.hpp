// kt-bench gemm: tunes each shape through the real daemon, one job per shape, and
// reports the job's final comparison: our best variant next to the family's baseline (cublasLt,
// best of its heuristic's top algorithms), re-measured interleaved in the same job on the same
// GPU, with the ratio's 95% interval and the device's measured copy bandwidth. With --repeat N the
// final comparison runs N times per shape, each in a job of its own pinned to the first run's
// candidates, and the report gives the run-to-run spread. Options, the row a finished job gives,
// the configs a repeat pins, and the run itself.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench_run_options.hpp"
#include "bench/bench_session.hpp"
#include "bench/gemm_report.hpp"
#include "bench/gemm_shape_sets.hpp"
#include "bench/job_driver.hpp"

namespace kt::bench {

struct GemmBenchOptions : BenchRunOptions {
  GemmBenchOptions() : BenchRunOptions("bench/results/gemm-latest.json") {}

  std::vector<std::string> shape_texts;  // "" = shape_set, else square_set_shapes()
  std::string shape_set;  // gemm_shape_sets.hpp: "square", "models", "all"; "" = none
  std::string dtype = "bf16";
  // "tensor" or "block": tune the fp8 family (gemm_fp8) with these scales, dtype e4m3 unless
  // given; "" = the 16-bit gemm family.
  std::string fp8_scaling;
  std::filesystem::path copy_json;  // kt-copy-bandwidth output to read instead of running it
  double copy_gbps = 0;             // > 0: use this instead of measuring
  int repeat = 1;  // final comparisons per shape: the tuning job's, then pinned jobs (>= 1)

  std::vector<GemmShape> shapes;  // filled by finish_gemm_bench_options
};

// Declares the options on app (CLI11), writing into options.
void add_gemm_bench_options(CLI::App& app, GemmBenchOptions& options);
// Checks what CLI11 cannot and parses the shapes; throws std::invalid_argument.
void finish_gemm_bench_options(GemmBenchOptions& options);

// The job of a shape: the gemm family's M, N, K, or with fp8_scaling gemm_fp8's with its
// BLOCK_SCALED.
JobRequest gemm_shape_request(const GemmBenchOptions& options, const GemmShape& shape);

// The row of one finished (or cut-short, failed, cancelled) job: ours, the baseline, the ratio
// and its interval from "best"."final" (the final comparison's winner); without a final
// comparison, the first-pass median and the job's reference_us, with a note saying so.
GemmRow gemm_row_from_job(const GemmShape& shape, const std::string& dtype, const JobRun& run);

// One run of the final comparison as the row of its job gives it.
GemmRepeat gemm_repeat_from_row(const GemmRow& row, std::int64_t job_id);

// The configs a repeat job pins: those of the job's final-comparison candidates
// ("comparison"."final"."variant_ids", looked up in the job's variants listing), the winner
// first; just the winner's ("best") when the job had no final comparison or the listing lacks
// them; empty when the job has no best.
std::vector<nlohmann::json> final_candidate_configs(const nlohmann::json& job,
                                                    const std::vector<nlohmann::json>& variants);

// Runs every shape (or reads options.from_json), then repeats 2..N of every shape, writes
// <out_dir>/table.md and <out_dir>/gemm.json after every job, the latest copy and the document's
// table at the end.
// Progress goes to log. Returns the process exit code: 1 when no shape got a measured variant
// (except for --from-json and --compile-only-arch), else 0.
int run_gemm_bench(const GemmBenchOptions& options, std::ostream& log);

}  // namespace kt::bench
