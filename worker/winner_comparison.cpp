#include "worker/winner_comparison.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "worker/statistics.hpp"

namespace kt {

InterleavedResult compare_candidates(const std::vector<std::int64_t>& ids,
                                     const std::vector<std::vector<double>>& samples_us) {
  if (ids.empty()) throw std::invalid_argument("compare_candidates: no candidates");
  if (ids.size() != samples_us.size())
    throw std::invalid_argument("compare_candidates: " + std::to_string(ids.size()) + " ids for " +
                                std::to_string(samples_us.size()) + " sample sets");
  std::vector<double> medians;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (samples_us[i].empty())
      throw std::invalid_argument("compare_candidates: variant " + std::to_string(ids[i]) +
                                  " has no samples");
    medians.push_back(median(samples_us[i]));
  }
  std::vector<std::size_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });

  InterleavedResult result;
  const std::size_t winner = order[0];
  result.winner_variant_id = ids[winner];
  if (ids.size() == 1) {
    result.reason = fmt::format("one candidate (variant {}, median {:.3f} us): nothing to compare",
                                ids[winner], medians[winner]);
    return result;
  }
  const std::size_t runner_up = order[1];
  result.runner_up_variant_id = ids[runner_up];
  const Interval w = median_confidence_interval(samples_us[winner]);
  const Interval r = median_confidence_interval(samples_us[runner_up]);
  result.distinguishable = w.high < r.low;
  result.margin = medians[winner] > 0 ? medians[runner_up] / medians[winner] - 1 : 0;
  result.reason = fmt::format(
      "variant {} median {:.3f} us (95% CI [{:.3f}, {:.3f}], {} samples) vs runner-up {} median "
      "{:.3f} us (95% CI [{:.3f}, {:.3f}], {} samples): {:+.2f}%, {}",
      ids[winner], medians[winner], w.low, w.high, samples_us[winner].size(), ids[runner_up],
      medians[runner_up], r.low, r.high, samples_us[runner_up].size(), 100.0 * result.margin,
      result.distinguishable ? "intervals disjoint: distinguishable"
                             : "intervals overlap: a tie within the noise");
  return result;
}

std::vector<Speedup> speedups_over_baseline(const std::vector<std::vector<double>>& samples_us,
                                            const std::vector<double>& baseline_us) {
  if (baseline_us.empty())
    throw std::invalid_argument("speedups_over_baseline: no baseline samples");
  std::vector<Speedup> out;
  for (const auto& samples : samples_us) {
    if (samples.empty())
      throw std::invalid_argument("speedups_over_baseline: a candidate has no samples");
    const RatioEstimate r = ratio_of_medians(baseline_us, samples);
    out.push_back({r.ratio, r.low, r.high});
  }
  return out;
}

}  // namespace kt
