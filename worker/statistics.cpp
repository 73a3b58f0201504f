#include "worker/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

namespace kt {
namespace {

std::vector<double> sorted_copy(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample set");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

// Linear interpolation at fractional rank p/100 * (n-1) of sorted data.
double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  if (!(p >= 0 && p <= 100)) throw std::invalid_argument("percentile outside [0, 100]");
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

Interval median_interval_of_sorted(const std::vector<double>& sorted, double z) {
  const double n = static_cast<double>(sorted.size());
  const double spread = z * std::sqrt(n);
  // 1-based ranks of the interval's ends, clamped to the data.
  const double low_rank = std::max(1.0, std::floor((n - spread) / 2.0));
  const double high_rank = std::min(n, std::ceil(1.0 + (n + spread) / 2.0));
  return {sorted[static_cast<std::size_t>(low_rank) - 1],
          sorted[static_cast<std::size_t>(high_rank) - 1]};
}

double rel_noise_of_sorted(const std::vector<double>& sorted) {
  const Interval interval = median_interval_of_sorted(sorted, 1.96);
  const double half_width = (interval.high - interval.low) / 2.0;
  if (half_width == 0) return 0;
  const double mid = percentile_of_sorted(sorted, 50);
  if (mid == 0) return std::numeric_limits<double>::infinity();
  return half_width / std::abs(mid);
}

}  // namespace

double percentile(std::span<const double> samples, double p) {
  return percentile_of_sorted(sorted_copy(samples), p);
}

double mean(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample set");
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double min_value(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of an empty sample set");
  return *std::min_element(samples.begin(), samples.end());
}

Interval median_confidence_interval(std::span<const double> samples, double z) {
  return median_interval_of_sorted(sorted_copy(samples), z);
}

double median_rel_noise(std::span<const double> samples) {
  return rel_noise_of_sorted(sorted_copy(samples));
}

RatioEstimate ratio_of_medians(std::span<const double> numerator,
                               std::span<const double> denominator, int resamples,
                               std::uint64_t seed) {
  RatioEstimate estimate;
  estimate.ratio = median(numerator) / median(denominator);  // both throw when empty
  std::mt19937_64 random(seed);
  std::vector<double> draw_num(numerator.size()), draw_den(denominator.size()), ratios;
  auto resampled_median = [&](std::span<const double> from, std::vector<double>& draw) {
    std::uniform_int_distribution<std::size_t> pick(0, from.size() - 1);
    for (double& x : draw) x = from[pick(random)];
    return median(draw);
  };
  ratios.reserve(static_cast<std::size_t>(std::max(resamples, 1)));
  for (int i = 0; i < std::max(resamples, 1); ++i)
    ratios.push_back(resampled_median(numerator, draw_num) /
                     resampled_median(denominator, draw_den));
  estimate.low = percentile(ratios, 2.5);
  estimate.high = percentile(ratios, 97.5);
  return estimate;
}

TimingSummary summarize(std::span<const double> samples_us, bool converged) {
  const std::vector<double> sorted = sorted_copy(samples_us);
  TimingSummary summary;
  summary.median_us = percentile_of_sorted(sorted, 50);
  summary.min_us = sorted.front();
  summary.p10_us = percentile_of_sorted(sorted, 10);
  summary.p90_us = percentile_of_sorted(sorted, 90);
  summary.mean_us = mean(samples_us);
  summary.rel_noise = rel_noise_of_sorted(sorted);
  summary.trials = static_cast<int>(sorted.size());
  summary.converged = converged;
  return summary;
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::keep_going:
      return "keep_going";
    case StopReason::converged:
      return "converged";
    case StopReason::max_trials:
      return "max_trials";
    case StopReason::max_time:
      return "max_time";
  }
  return "unknown";
}

StopRule stop_rule_from(const TimingOptions& options) {
  return StopRule{options.min_trials, options.max_trials, options.max_seconds,
                  options.target_rel_noise};
}

StopCriterion::StopCriterion(StopRule rule) : rule_(rule) {
  rule_.min_trials = std::max(1, rule_.min_trials);
  rule_.max_trials = std::max(rule_.min_trials, rule_.max_trials);
}

StopReason StopCriterion::evaluate(std::span<const double> samples,
                                   std::chrono::duration<double> elapsed) const {
  const int n = static_cast<int>(samples.size());
  if (n == 0) return StopReason::keep_going;
  if (n >= rule_.min_trials && median_rel_noise(samples) <= rule_.target_rel_noise)
    return StopReason::converged;
  if (n >= rule_.max_trials) return StopReason::max_trials;
  if (elapsed.count() >= rule_.max_seconds) return StopReason::max_time;
  return StopReason::keep_going;
}

StopReason StopCriterion::evaluate(std::span<const double> kept, int attempts,
                                   std::chrono::duration<double> elapsed) const {
  if (!kept.empty()) {
    const StopReason reason = evaluate(kept, elapsed);
    if (reason == StopReason::keep_going && attempts >= 2 * rule_.max_trials)
      return StopReason::max_trials;
    return reason;
  }
  if (attempts >= rule_.max_trials) return StopReason::max_trials;
  if (elapsed.count() >= rule_.max_seconds) return StopReason::max_time;
  return StopReason::keep_going;
}

}  // namespace kt
