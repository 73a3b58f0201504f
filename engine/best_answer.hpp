// GET /v1/best's answer, typed: our best variant, or the family's baseline when the baseline wins
// (tuner/baseline_verdict.hpp has the rule), with how to launch ours, what it is measured against
// and whether it is stale. The server renders it (server/best_answer.hpp); docs/api.md shows the
// shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "engine/final_figures.hpp"
#include "engine/problem_query.hpp"
#include "engine/result_keys.hpp"
#include "tuner/baseline_verdict.hpp"

namespace kt {

// Our best measured variant of the problem.
struct OwnBest {
  VariantRecord variant;
  std::optional<FinalFigures> final;               // when it was in the final comparison
  std::vector<std::string> throttle_reason_names;  // of variant.timing's throttle reasons
};

// The family's baseline as a candidate: the library call a user makes without kerntune.
struct BaselineCandidate {
  std::string kind;                 // as it described itself; the family's when the job stored none
  Config config;                    // its integer choices ({"algorithm_index": 3, "tile": 24, ...})
  nlohmann::json call;              // its whole description as stored; null when never described
  std::optional<double> median_us;  // what the verdict compared with
  std::optional<double> first_pass_us;  // the first pass's, on the same GPU where known
  nlohmann::json timing;                // of median_us as stored; null when unknown
  // Same problem, same flops and bytes: its rates follow from ours (nullopt without ours).
  std::optional<double> tflops;
  std::optional<double> gbps;
};

// The answer for a tuned shape near the asked one (nearest=1 on a miss).
struct NearestShape {
  Shape shape;
  std::string shape_key;
  double distance = 0;
  Shape asked_shape;  // the query's
  std::string asked_shape_key;
};

struct BestAnswer {
  JobRecord job;               // the job the answer comes from (ours, else the baseline's)
  std::optional<OwnBest> own;  // nullopt: no variant of ours measured
  BaselineCandidate baseline;
  BaselineVerdict verdict;
  std::optional<std::string> baseline_failed;  // why the job's baseline failed, if it did
  std::optional<nlohmann::json> launch;        // how to launch ours for the asked shape
  std::string reference_kind;                  // what speedup_vs_reference compares with
  std::string baseline_kind;                   // the family's baseline, its reference without one
  std::string baseline_description;
  bool baseline_in_process = false;  // false: an external baseline, speedups stay null
  Staleness staleness;
  std::optional<NearestShape> nearest;  // nullopt: the asked shape's own answer

  // The baseline is the answer (also when none of our variants was measured).
  bool baseline_is_answer() const { return !own || verdict.baseline_wins; }
};

// What an answer reads besides the store.
struct AnswerSources {
  const FamilyRegistry& families;
  const std::vector<DeviceInfo>& devices;         // this daemon's GPUs: results' keys
  const std::vector<DeviceInfo>& launch_devices;  // the scheduler's: launch limits
};

// The problem's answer; with nearest, a miss answers with the nearest tuned shape's. nullopt when
// nothing is tuned (no measured variant and no job that timed the baseline).
std::optional<BestAnswer> best_answer(Store& store, const ProblemQuery& problem, bool nearest,
                                      const AnswerSources& sources);

}  // namespace kt
