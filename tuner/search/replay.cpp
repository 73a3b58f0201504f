#include "tuner/search/replay.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tuner/device_limits.hpp"
#include "tuner/search/launch_facts.hpp"
#include "tuner/search/warm_start.hpp"
#include "tuner/shape_distance.hpp"

namespace kt {

ReplayRun replay(const RecordedSpace& space, std::string_view searcher_name, std::uint64_t seed,
                 const ReplayOptions& options) {
  auto searcher = make_searcher(searcher_name, seed);
  if (!searcher)
    throw std::invalid_argument("unknown searcher '" + std::string(searcher_name) + "'");
  if (!options.seeds.empty() && learns_from_measurements(searcher_name))
    searcher = seeded_first(std::move(searcher), options.seeds);
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
  std::size_t measured = 0;
  const auto done = [&] {
    return (run.reached && measured >= options.budget) ||
           (options.stop_after > 0 && measured >= options.stop_after);
  };
  while (!done()) {
    const SearchState state{candidates, observations, taken, options.problem};
    const std::vector<std::size_t> batch = searcher->propose(state, options.batch);
    if (batch.empty()) {
      run.searcher_stopped = measured < candidates.size();
      break;
    }
    for (std::size_t c : batch) {
      if (c >= taken.size() || taken[c])
        throw std::logic_error("searcher '" + std::string(searcher_name) +
                               "' proposed a taken or unknown candidate");
      taken[c] = true;
      const std::optional<double> time = space.variants[c].median_us;
      // What the runner gets back: the outcome plus, now compiled, the resource report.
      candidates[c].facts = space.variants[c].candidate.facts;
      observations.push_back({c, time});
      ++measured;
      if (!run.reached) ++run.evaluations;
      if (time && (!best || *time < *best)) {
        best = time;
        run.convergence.emplace_back(measured, *time);
      }
      if (options.budget > 0 && measured <= options.budget) run.best_at_budget_us = best;
      if (best && *best <= target) run.reached = true;
      if (done()) break;
    }
  }
  run.measured = measured;
  return run;
}

std::vector<std::size_t> warm_start_seeds(const RecordedSpace& space,
                                          const std::vector<const RecordedSpace*>& others) {
  const auto model = [](const RecordedSpace& s) { return s.device.value("name", std::string()); };
  struct Neighbour {
    Shape shape;
    double distance = 0;
    std::vector<const RecordedVariant*> measured;
  };
  std::vector<Neighbour> neighbours;
  for (const RecordedSpace* other : others) {
    if (other->family != space.family || other->dtype != space.dtype ||
        model(*other) != model(space) || other->shape == space.shape)
      continue;
    const auto distance = shape_distance(space.shape, other->shape);
    if (!distance) continue;
    auto same = std::find_if(neighbours.begin(), neighbours.end(),
                             [&](const Neighbour& n) { return n.shape == other->shape; });
    if (same == neighbours.end()) {
      neighbours.push_back({other->shape, *distance, {}});
      same = neighbours.end() - 1;
    }
    for (const RecordedVariant& v : other->variants)
      if (v.median_us) same->measured.push_back(&v);
  }
  std::sort(neighbours.begin(), neighbours.end(), [](const Neighbour& a, const Neighbour& b) {
    return a.distance != b.distance ? a.distance < b.distance
                                    : canonical_key(a.shape) < canonical_key(b.shape);
  });
  if (neighbours.size() > kWarmStartShapes) neighbours.resize(kWarmStartShapes);

  std::map<std::pair<std::string, std::string>, std::size_t> index;  // (template, config key)
  for (std::size_t i = 0; i < space.variants.size(); ++i) {
    const SearchCandidate& c = space.variants[i].candidate;
    index.emplace(std::pair{c.template_name, canonical_key(c.config)}, i);
  }
  std::vector<std::size_t> seeds;
  std::set<std::pair<std::string, std::string>> seen;
  for (Neighbour& n : neighbours) {
    std::stable_sort(n.measured.begin(), n.measured.end(),
                     [](const RecordedVariant* a, const RecordedVariant* b) {
                       return *a->median_us < *b->median_us;
                     });
    std::size_t offered = 0, taken = 0;
    for (const RecordedVariant* v : n.measured) {
      if (offered >= kSeedCandidatesPerShape || taken >= kSeedsPerShape) break;
      const std::pair key{v->candidate.template_name, canonical_key(v->candidate.config)};
      if (!seen.insert(key).second) continue;
      ++offered;
      const auto found = index.find(key);
      if (found == index.end()) continue;  // pruned for this shape
      seeds.push_back(found->second);
      ++taken;
    }
  }
  return seeds;
}

SearchProblem add_launch_facts(RecordedSpace& space, const Family& family) {
  std::optional<DeviceLimits> limits = limits_for_arch(space.device.value("arch", std::string()));
  if (!limits) return {};
  if (space.device.contains("sm_count") && space.device.at("sm_count").is_number_integer())
    limits->sm_count = space.device.at("sm_count").get<int>();
  for (RecordedVariant& v : space.variants) {
    const GridFacts grid = grid_facts(family, v.candidate.template_name, v.candidate.config,
                                      space.shape, space.dtype, *limits);
    v.candidate.grid_blocks = grid.blocks;
    v.candidate.blocks_per_sm = grid.blocks_per_sm;
    v.candidate.dynamic_smem = grid.dynamic_smem;
  }
  return search_problem(family, space.shape, space.dtype, *limits);
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
