// Settling a near-tie: the daemon hands the worker a job's top candidates (already validated) and
// the worker times them interleaved, A B C A B C ..., so slow drifts (clocks, temperature, other
// tenants) hit every candidate alike. The answer says who won and whether the winner is
// distinguishable from the runner-up (winner_comparison.hpp has the rule).
//
//   {"op":"measure_interleaved","candidates":[MeasureRequest...],"timing":{TimingOptions}}
//     -> {"ok":true,"interleaved":{InterleavedResult}}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/measure_protocol.hpp"

namespace kt {

struct InterleavedRequest {
  std::vector<MeasureRequest> candidates;  // cubin, kernel and full instance are used
  TimingOptions timing;                    // per candidate; see interleaved_measurement.hpp
};

struct InterleavedResult {
  std::vector<std::int64_t> variant_ids;  // the candidates, in request order
  std::vector<TimingSummary> timings;     // same order; each from the interleaved samples
  std::int64_t winner_variant_id = 0;     // lowest interleaved median
  std::int64_t runner_up_variant_id = 0;  // second lowest (0 with fewer than 2 candidates)
  bool distinguishable = false;           // the two medians' confidence intervals are disjoint
  double margin = 0;                      // runner_up_median / winner_median - 1
  std::string reason;                     // the decision in words, with the numbers
};

nlohmann::json to_json(const InterleavedRequest& r);
InterleavedRequest interleaved_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const InterleavedResult& r);
InterleavedResult interleaved_result_from_json(const nlohmann::json& j);

}  // namespace kt
