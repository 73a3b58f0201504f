// What a finished tuning job of any family gives a benchmark row: our winner's figures from the
// job's final comparison (the top first-pass candidates re-measured interleaved with the family's
// in-process baseline, if it has one), the candidates' variant ids, the counts, and a note saying
// why anything is missing. The GEMM bench's rows (gemm_bench_run) read the same fields; the
// dual-GEMM and attention benches use this family-neutral form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/job_driver.hpp"

namespace kt::bench {

struct JobFigures {
  nlohmann::json config;  // the winner {"template": name, axis: value, ...}; null if none
  std::int64_t winner_variant_id = 0;
  // The final comparison's candidates, winner first; just the winner without a final comparison.
  std::vector<std::int64_t> candidate_ids;
  std::optional<double> ours_us;  // final comparison median (first pass when there was none)
  std::optional<double> first_pass_us;
  std::optional<double> baseline_us;  // the in-process baseline's median from the same rounds
  std::optional<double> ratio, ratio_low, ratio_high;  // baseline / ours with its 95% interval
  nlohmann::json baseline;  // the baseline as the daemon describes it; null when none
  bool from_final = false;  // ours (and the baseline, if any) come from the final comparison
  std::int64_t variants_measured = 0;
  double tuning_seconds = 0;
  std::string note;  // why figures are missing or partial; "" = none
};

// expect_baseline: the family's baseline runs in the job (GEMM, dual GEMM), so a missing
// baseline is noted; false for a family whose baseline is timed outside (attention: SDPA).
JobFigures job_figures(const JobRun& run, bool expect_baseline);

// "a; b" joining the non-empty parts.
std::string join_notes(const std::vector<std::string>& notes);

}  // namespace kt::bench
