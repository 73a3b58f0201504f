// Warm start: a searcher that measures given seeds first (the best configs of the nearest tuned
// shapes, engine/warm_start.hpp finds them), then lets the job's own searcher go on, which learns
// from the seeds' measurements like from any others.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "tuner/search/searcher.hpp"

namespace kt {

// How much a warm start takes: of each of the kWarmStartShapes nearest tuned shapes (nearest
// first), the fastest kSeedsPerShape configs that survive the new shape's constraints, looked for
// among that shape's kSeedCandidatesPerShape fastest (a neighbour's best often has a tile larger
// than the new shape allows).
inline constexpr std::size_t kWarmStartShapes = 2;
inline constexpr std::size_t kSeedsPerShape = 4;
inline constexpr std::size_t kSeedCandidatesPerShape = 16;

// The searchers that learn from what was measured (local, model): only they are warm-started;
// exhaustive and random keep their order, so their replay figures stay what they measure.
bool learns_from_measurements(std::string_view searcher_name);

// Proposes the untaken seeds (candidate indices, in the order given, duplicates ignored) before
// anything `inner` proposes; a batch that the seeds do not fill is topped up by `inner`.
std::unique_ptr<Searcher> seeded_first(std::unique_ptr<Searcher> inner,
                                       std::vector<std::size_t> seeds);

}  // namespace kt
