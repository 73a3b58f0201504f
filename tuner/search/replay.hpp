// Replay: a searcher run against a recorded whole space instead of a GPU. Every proposed variant
// is "measured" by looking its recorded outcome up; the run stops once the best found is within
// `within` of the space's optimum. Deterministic for (space, searcher, seed, batch).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tuner/search/recorded_space.hpp"

namespace kt {

struct ReplayOptions {
  double within = 0.03;     // target: best <= optimum * (1 + within)
  std::size_t batch = 8;    // variants proposed at a time (the runner's batch)
  bool facts_known = true;  // every candidate's resource report known up front (compile-ahead)
  // A warm start: candidate indices measured first (warm_start_seeds), for searchers that learn
  // (tuner/search/warm_start.hpp); exhaustive and random ignore them, as in the daemon.
  std::vector<std::size_t> seeds;
};

struct ReplayRun {
  std::size_t space_size = 0;
  std::size_t evaluations = 0;  // variants measured (or failed) until the target was reached
  bool reached = false;
  double fraction() const {
    return space_size ? static_cast<double>(evaluations) / static_cast<double>(space_size) : 0;
  }
  std::vector<std::pair<std::size_t, double>> convergence;  // (evaluations, best_us) on change
};

// Throws std::invalid_argument for an unknown searcher or a space with nothing measured.
ReplayRun replay(const RecordedSpace& space, std::string_view searcher, std::uint64_t seed,
                 const ReplayOptions& options = {});

// The warm start a job on `space` would get from the recorded `others` as tuned shapes: of the
// kWarmStartShapes nearest other shapes of the same family, dtype and GPU model (device "name"),
// nearest first, the fastest kSeedsPerShape configs among each one's kSeedCandidatesPerShape
// fastest that `space` holds (tuner/search/warm_start.hpp), as indices of `space`'s candidates. Several recordings of one shape count as one tuned
// shape (their variants together, as one Pareto front would hold them); recordings of the
// space's own shape are left out.
std::vector<std::size_t> warm_start_seeds(const RecordedSpace& space,
                                          const std::vector<const RecordedSpace*>& others);

// Quantile q in [0, 1] of `values` (linear between order statistics); 0 for none.
double quantile(std::vector<double> values, double q);

}  // namespace kt
