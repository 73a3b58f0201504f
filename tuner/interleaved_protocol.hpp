// A job's final comparison: the daemon hands the worker the job's top candidates (already
// validated) and its baseline, and the worker times them interleaved, A B C ... baseline, so slow
// drifts (clocks, temperature, other tenants) hit every side alike. The answer says who won,
// whether the winner is distinguishable from the runner-up (winner_comparison.hpp has the rule)
// and each candidate's speedup over the baseline with its interval.
//
//   {"op":"measure_interleaved","candidates":[MeasureRequest...],"timing":{TimingOptions},
//    "baseline":{ProblemInstance}?,"baseline_seed":N?}
//     -> {"ok":true,"interleaved":{InterleavedResult}}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/measure_protocol.hpp"

namespace kt {

struct InterleavedRequest {
  std::vector<MeasureRequest> candidates;  // cubin, kernel and full instance are used
  TimingOptions timing;                    // per candidate; see interleaved_measurement.hpp
  // The final comparison of a job: the family's baseline (its problem.baseline, or the
  // reference's own-dtype run) on its own buffers, timed as one more side of every round.
  std::optional<ProblemInstance> baseline;
  std::uint64_t baseline_seed = 1;
};

// baseline median / candidate median, with its bootstrap 95% interval (statistics.hpp).
struct Speedup {
  double value = 0;
  double low = 0;
  double high = 0;
};

struct InterleavedResult {
  std::vector<std::int64_t> variant_ids;  // the candidates, in request order
  std::vector<TimingSummary> timings;     // same order; each from the interleaved samples
  std::int64_t winner_variant_id = 0;     // lowest interleaved median
  std::int64_t runner_up_variant_id = 0;  // second lowest (0 with fewer than 2 candidates)
  bool distinguishable = false;           // the two medians' confidence intervals are disjoint
  double margin = 0;                      // runner_up_median / winner_median - 1
  std::string reason;                     // the decision in words, with the numbers
  // With a baseline: its timing from the same rounds, what it was (Baseline::describe()), and
  // per candidate (request order) the speedup over it.
  std::optional<TimingSummary> baseline_timing;
  nlohmann::json baseline;  // null without a baseline
  std::vector<Speedup> speedups;
};

// The speedup (and interval) of one compared variant, or of the winner; nullopt without a
// baseline or for a variant that was not compared.
std::optional<Speedup> speedup_of(const InterleavedResult& r, std::int64_t variant_id);
std::optional<Speedup> winner_speedup(const InterleavedResult& r);
// The interleaved timing of one compared variant; nullptr if it was not compared.
const TimingSummary* final_timing_of(const InterleavedResult& r, std::int64_t variant_id);

nlohmann::json speedups_to_json(const std::vector<Speedup>& speedups);
std::vector<Speedup> speedups_from_json(const nlohmann::json& j);  // throws on a malformed one
nlohmann::json to_json(const InterleavedRequest& r);
InterleavedRequest interleaved_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const InterleavedResult& r);
InterleavedResult interleaved_result_from_json(const nlohmann::json& j);

}  // namespace kt
