// Statistics of timing samples and the rule that decides when enough trials were taken. Pure
// functions on plain numbers: no GPU, unit-tested on synthetic samples.
//
// Noise estimate: the relative half-width of a distribution-free ~95% confidence interval of the
// median. Sorted samples x(1) <= ... <= x(n) bracket the true median between the order statistics
// of ranks n/2 -/+ z*sqrt(n)/2 (the binomial(n, 1/2) count of samples below the median, normal
// approximation, z = 1.96). No assumption on the distribution's shape, which matters because
// kernel times are skewed and often multimodal; it shrinks like 1/sqrt(n) and is exactly 0 when
// the central samples are identical.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "tuner/measure_protocol.hpp"
#include "tuner/median.hpp"  // median: the one definition, shared with the benchmark programs

namespace kt {

// All functions throw std::invalid_argument on an empty sample set (median too).
// p in [0, 100]; linear interpolation between closest ranks (numpy's default).
double percentile(std::span<const double> samples, double p);
double mean(std::span<const double> samples);
double min_value(std::span<const double> samples);

struct Interval {
  double low = 0;
  double high = 0;
};
// Distribution-free confidence interval of the median (see the file comment); with few samples
// it widens to [min, max].
Interval median_confidence_interval(std::span<const double> samples, double z = 1.96);
// Half-width of that interval divided by the median; 0 for identical samples, +inf for a median
// of 0 with spread.
double median_rel_noise(std::span<const double> samples);

// The ratio median(numerator) / median(denominator) and its 95% bootstrap percentile interval:
// each of `resamples` rounds draws both sample sets again with replacement (independently) and
// takes the ratio of their medians; low/high are the 2.5th and 97.5th percentiles. No assumption
// on the distributions; seeded, so the same samples give the same interval.
struct RatioEstimate {
  double ratio = 0;
  double low = 0;
  double high = 0;
};
RatioEstimate ratio_of_medians(std::span<const double> numerator,
                               std::span<const double> denominator, int resamples = 2000,
                               std::uint64_t seed = 0x6B74);

// Median, min, p10/p90, mean, rel_noise and the trial count of the samples (microseconds).
TimingSummary summarize(std::span<const double> samples_us, bool converged);

enum class StopReason {
  keep_going,
  converged,   // at least min_trials and rel noise <= target
  max_trials,  // hit the trial limit first
  max_time,    // hit the time limit first (wins over min_trials: a slow kernel cannot overrun)
};

const char* to_string(StopReason reason);

struct StopRule {
  int min_trials = 10;
  int max_trials = 500;
  double max_seconds = 2.0;
  double target_rel_noise = 0.005;
};

StopRule stop_rule_from(const TimingOptions& options);

// Decides after each trial whether to take another. At least one sample is always wanted.
class StopCriterion {
 public:
  explicit StopCriterion(StopRule rule);
  // samples: every trial so far; elapsed: time spent on trials so far.
  StopReason evaluate(std::span<const double> samples, std::chrono::duration<double> elapsed) const;
  // The same when some trials were thrown away (throttled): kept holds the trusted samples and
  // attempts counts every trial. With nothing kept it stops on max_trials attempts or the time
  // limit; with samples kept it also stops after 2 x max_trials attempts, so a GPU that throttles
  // all the time cannot make a variant run twice its trial budget.
  StopReason evaluate(std::span<const double> kept, int attempts,
                      std::chrono::duration<double> elapsed) const;
  const StopRule& rule() const { return rule_; }

 private:
  StopRule rule_;
};

}  // namespace kt
