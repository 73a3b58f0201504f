// Who won an interleaved re-measure, and can the winner be told apart from the runner-up?
//
// Rule: rank the candidates by median; the winner is distinguishable from the runner-up when the
// two medians' distribution-free ~95% confidence intervals (statistics.hpp) do not overlap:
// winner.high < runner_up.low. Chosen over a rank-sum test because it is the interval the
// stopping rule already drives below the noise target, it assumes nothing about the shape of
// the time distribution (kernel times are skewed, often bimodal), and it is conservative: two
// disjoint 95% intervals mean a difference well beyond the noise. margin = runner-up median /
// winner median - 1. Pure, unit-tested on synthetic samples.
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/interleaved_protocol.hpp"

namespace kt {

// ids[i] and samples_us[i] describe candidate i (samples: per-launch microseconds, non-empty).
// Fills winner/runner-up ids, distinguishable, margin and reason; leaves variant_ids and timings
// to the caller. One candidate: it wins, runner-up 0, not distinguishable. Throws
// std::invalid_argument for no candidates, mismatched sizes or an empty sample set.
InterleavedResult compare_candidates(const std::vector<std::int64_t>& ids,
                                     const std::vector<std::vector<double>>& samples_us);

// Per candidate, baseline median / candidate median with its bootstrap 95% interval
// (ratio_of_medians). A candidate is faster than the baseline only when low > 1. Throws
// std::invalid_argument on an empty sample set.
std::vector<Speedup> speedups_over_baseline(const std::vector<std::vector<double>>& samples_us,
                                            const std::vector<double>& baseline_us);

}  // namespace kt
