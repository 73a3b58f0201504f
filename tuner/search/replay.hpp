// Replay: a searcher run against a recorded whole space instead of a GPU. Every proposed variant
// is "measured" by looking its recorded outcome up; the run stops once the best found is within
// `within` of the space's optimum. Deterministic for (space, searcher, seed, batch).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/family.hpp"
#include "tuner/search/recorded_space.hpp"

namespace kt {

struct ReplayOptions {
  double within = 0.03;     // target: best <= optimum * (1 + within)
  std::size_t batch = 8;    // variants proposed at a time (the runner's batch)
  bool facts_known = true;  // every candidate's resource report known up front (compile-ahead)
  // A warm start: candidate indices measured first (warm_start_seeds), for searchers that learn
  // (tuner/search/warm_start.hpp); exhaustive and random ignore them, as in the daemon.
  std::vector<std::size_t> seeds;
  // What the searchers are told of the shape and device (launch_facts.hpp); default: nothing.
  SearchProblem problem;
  // > 0: go on after the target until this many variants were measured, for best_at_budget_us.
  std::size_t budget = 0;
  // > 0: stop after this many measured variants, target reached or not.
  std::size_t stop_after = 0;
};

struct ReplayRun {
  std::size_t space_size = 0;
  std::size_t evaluations = 0;  // variants measured (or failed) until the target was reached
  bool reached = false;
  double fraction() const {
    return space_size ? static_cast<double>(evaluations) / static_cast<double>(space_size) : 0;
  }
  std::vector<std::pair<std::size_t, double>> convergence;  // (measured, best_us) on change
  // The best time among the first options.budget measured variants (budget > 0, one measured).
  std::optional<double> best_at_budget_us;
  std::size_t measured = 0;       // variants measured (or failed) when the run ended
  bool searcher_stopped = false;  // it ended because the searcher proposed nothing
};

// Throws std::invalid_argument for an unknown searcher or a space with nothing measured.
ReplayRun replay(const RecordedSpace& space, std::string_view searcher, std::uint64_t seed,
                 const ReplayOptions& options = {});

// The warm start a job on `space` would get from the recorded `others` as tuned shapes: of the
// kWarmStartShapes nearest other shapes of the same family, dtype and GPU model (device "name"),
// nearest first, the fastest kSeedsPerShape configs among each one's kSeedCandidatesPerShape
// fastest that `space` holds (tuner/search/warm_start.hpp), as indices of `space`'s candidates.
// Several recordings of one shape count as one tuned shape (their variants together, as one Pareto
// front would hold them); recordings of the space's own shape are left out.
std::vector<std::size_t> warm_start_seeds(const RecordedSpace& space,
                                          const std::vector<const RecordedSpace*>& others);

// What a job on the space's shape and device would tell its searcher: each variant's grid_blocks
// and blocks_per_sm evaluated from `family`'s launch formulas (0 where a recorded config no longer
// evaluates), and the SearchProblem. The device is the arch table's part for the space's device
// "arch" (sm_90a: 132 SMs, which the H100 SXM and the H200 both have), or the recorded "sm_count"
// when the space holds one. An unknown arch: no grids, the default SearchProblem.
SearchProblem add_launch_facts(RecordedSpace& space, const Family& family);

// Quantile q in [0, 1] of `values` (linear between order statistics); 0 for none.
double quantile(std::vector<double> values, double q);

}  // namespace kt
