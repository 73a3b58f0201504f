#include "tuner/search/replay.hpp"

#include <algorithm>
#include <stdexcept>

namespace kt {

ReplayRun replay(const RecordedSpace& space, std::string_view searcher_name, std::uint64_t seed,
                 const ReplayOptions& options) {
  auto searcher = make_searcher(searcher_name, seed);
  if (!searcher)
    throw std::invalid_argument("unknown searcher '" + std::string(searcher_name) + "'");
  const auto optimum = space.optimum_us();
  if (!optimum) throw std::invalid_argument("the space has no measured variant");
  const double target = *optimum * (1.0 + options.within);

  std::vector<SearchCandidate> candidates;
  for (const RecordedVariant& v : space.variants) {
    candidates.push_back(v.candidate);
    if (!options.facts_known) candidates.back().facts.reset();
  }
  std::vector<SearchObservation> observations;
  std::vector<bool> taken(candidates.size(), false);
  ReplayRun run;
  run.space_size = candidates.size();
  std::optional<double> best;
  while (!run.reached) {
    const SearchState state{candidates, observations, taken};
    const std::vector<std::size_t> batch = searcher->propose(state, options.batch);
    if (batch.empty()) break;
    for (std::size_t c : batch) {
      if (c >= taken.size() || taken[c])
        throw std::logic_error("searcher '" + std::string(searcher_name) +
                               "' proposed a taken or unknown candidate");
      taken[c] = true;
      const std::optional<double> time = space.variants[c].median_us;
      // What the runner gets back: the outcome plus, now compiled, the resource report.
      candidates[c].facts = space.variants[c].candidate.facts;
      observations.push_back({c, time});
      ++run.evaluations;
      if (time && (!best || *time < *best)) {
        best = time;
        run.convergence.emplace_back(run.evaluations, *time);
      }
      if (best && *best <= target) {
        run.reached = true;
        break;
      }
    }
  }
  return run;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace kt
