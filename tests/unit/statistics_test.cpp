#include "worker/statistics.hpp"

#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace kt {
namespace {

using std::chrono::duration;

std::vector<double> normal_samples(int n, double mean_us, double sigma_us, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(mean_us, sigma_us);
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(dist(rng));
  return samples;
}

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7);
}

TEST(Statistics, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> samples{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110};
  EXPECT_DOUBLE_EQ(percentile(samples, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(samples, 10), 20);
  EXPECT_DOUBLE_EQ(percentile(samples, 90), 100);
  EXPECT_DOUBLE_EQ(percentile(samples, 100), 110);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{1, 2}, 25), 1.25);
  EXPECT_THROW(percentile(samples, 101), std::invalid_argument);
}

TEST(Statistics, MeanAndMin) {
  const std::vector<double> samples{3, 1, 2, 6};
  EXPECT_DOUBLE_EQ(mean(samples), 3);
  EXPECT_DOUBLE_EQ(min_value(samples), 1);
}

TEST(Statistics, EmptySamplesAreRejected) {
  const std::vector<double> none;
  EXPECT_THROW(median(none), std::invalid_argument);
  EXPECT_THROW(mean(none), std::invalid_argument);
  EXPECT_THROW(summarize(none, false), std::invalid_argument);
}

TEST(Statistics, SummaryOfKnownSamples) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // 1..100, unsorted
  const TimingSummary s = summarize(samples, true);
  EXPECT_DOUBLE_EQ(s.median_us, 50.5);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_NEAR(s.p10_us, 10.9, 1e-12);
  EXPECT_NEAR(s.p90_us, 90.1, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
  EXPECT_EQ(s.trials, 100);
  EXPECT_TRUE(s.converged);
  // 95% interval of the median of 100 samples: ranks 40 and 61.
  const Interval ci = median_confidence_interval(samples);
  EXPECT_DOUBLE_EQ(ci.low, 40);
  EXPECT_DOUBLE_EQ(ci.high, 61);
  EXPECT_NEAR(s.rel_noise, (61.0 - 40.0) / 2 / 50.5, 1e-12);
}

TEST(Statistics, FewSamplesWidenTheIntervalToTheRange) {
  const std::vector<double> samples{10, 11, 12, 13, 30};
  const Interval ci = median_confidence_interval(samples);
  EXPECT_DOUBLE_EQ(ci.low, 10);
  EXPECT_DOUBLE_EQ(ci.high, 30);
}

TEST(Statistics, IdenticalSamplesHaveNoNoise) {
  EXPECT_EQ(median_rel_noise(std::vector<double>(10, 42.0)), 0.0);
}

TEST(Statistics, NoiseShrinksWithMoreSamples) {
  const auto few = normal_samples(20, 100, 5, 1);
  const auto many = normal_samples(2000, 100, 5, 1);
  const double noise_few = median_rel_noise(few);
  const double noise_many = median_rel_noise(many);
  EXPECT_GT(noise_few, 0.01);
  EXPECT_LT(noise_many, noise_few / 4);  // ~1/sqrt(n): 10x the samples' root is ~3.2x, 100x is 10x
  // The estimate is calibrated: sigma 5% per sample gives a median SE of ~1.25*5%/sqrt(n).
  EXPECT_NEAR(noise_many, 1.96 * 1.2533 * 0.05 / std::sqrt(2000.0), 0.0015);
}

TEST(Statistics, NoiseIsRobustToOutliers) {
  auto samples = normal_samples(200, 100, 1, 7);
  const double clean = median_rel_noise(samples);
  for (int i = 0; i < 10; ++i) samples[i] = 10000;  // 5% of trials hit by a stall
  EXPECT_LT(median_rel_noise(samples), clean * 2);
}

TEST(StopCriterion, StopsAtMinTrialsWhenSamplesAreIdentical) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 500, .max_seconds = 10, .target_rel_noise = 0.005});
  std::vector<double> samples;
  int trials = 0;
  StopReason reason = StopReason::keep_going;
  while (reason == StopReason::keep_going) {
    samples.push_back(25.0);
    ++trials;
    reason = stop.evaluate(samples, duration<double>(0.001 * trials));
  }
  EXPECT_EQ(reason, StopReason::converged);
  EXPECT_EQ(trials, 10);
}

TEST(StopCriterion, KeepsGoingWhileNoisy) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 500, .max_seconds = 10, .target_rel_noise = 0.005});
  // 20% spread per sample: 30 samples leave the median uncertain by several percent.
  const auto samples = normal_samples(30, 100, 20, 3);
  EXPECT_EQ(stop.evaluate(samples, duration<double>(0.1)), StopReason::keep_going);
}

TEST(StopCriterion, ConvergesOnceEnoughNoisySamplesArrive) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 100000, .max_seconds = 1e9, .target_rel_noise = 0.005});
  const auto pool = normal_samples(20000, 100, 2, 5);
  std::vector<double> samples;
  StopReason reason = StopReason::keep_going;
  for (double s : pool) {
    samples.push_back(s);
    reason = stop.evaluate(samples, duration<double>(0));
    if (reason != StopReason::keep_going) break;
  }
  EXPECT_EQ(reason, StopReason::converged);
  EXPECT_GT(samples.size(), 30u);    // 2% spread cannot reach 0.5% with a handful
  EXPECT_LT(samples.size(), 2000u);  // ... but a few hundred do
  EXPECT_LE(median_rel_noise(samples), 0.005);
}

TEST(StopCriterion, HonoursMaxTrials) {
  const StopCriterion stop(
      {.min_trials = 5, .max_trials = 40, .max_seconds = 100, .target_rel_noise = 1e-9});
  const auto pool = normal_samples(100, 100, 20, 9);
  std::vector<double> samples;
  StopReason reason = StopReason::keep_going;
  for (double s : pool) {
    samples.push_back(s);
    reason = stop.evaluate(samples, duration<double>(0));
    if (reason != StopReason::keep_going) break;
  }
  EXPECT_EQ(reason, StopReason::max_trials);
  EXPECT_EQ(samples.size(), 40u);
}

TEST(StopCriterion, HonoursMaxTimeEvenBeforeMinTrials) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 500, .max_seconds = 2, .target_rel_noise = 0.005});
  const std::vector<double> samples{1000, 1500, 1200};
  EXPECT_EQ(stop.evaluate(samples, duration<double>(1.9)), StopReason::keep_going);
  EXPECT_EQ(stop.evaluate(samples, duration<double>(2.0)), StopReason::max_time);
}

TEST(StopCriterion, WantsAtLeastOneSample) {
  const StopCriterion stop(
      {.min_trials = 0, .max_trials = 0, .max_seconds = 0, .target_rel_noise = 1});
  EXPECT_EQ(stop.evaluate(std::vector<double>{}, duration<double>(5)), StopReason::keep_going);
  EXPECT_NE(stop.evaluate(std::vector<double>{1.0}, duration<double>(5)), StopReason::keep_going);
}

TEST(StopCriterionWithDiscards, NothingKeptStopsOnAttemptsOrTime) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 50, .max_seconds = 2, .target_rel_noise = 0.005});
  const std::vector<double> none;
  EXPECT_EQ(stop.evaluate(none, 49, duration<double>(1)), StopReason::keep_going);
  EXPECT_EQ(stop.evaluate(none, 50, duration<double>(1)), StopReason::max_trials);
  EXPECT_EQ(stop.evaluate(none, 3, duration<double>(2)), StopReason::max_time);
}

TEST(StopCriterionWithDiscards, KeptSamplesDecideAsWithoutDiscards) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 50, .max_seconds = 100, .target_rel_noise = 0.005});
  const std::vector<double> steady(10, 25.0);
  // Ten identical kept samples converge, however many trials were thrown away on the way.
  EXPECT_EQ(stop.evaluate(steady, 30, duration<double>(0.1)), StopReason::converged);
  const auto noisy = normal_samples(20, 100, 20, 4);
  EXPECT_EQ(stop.evaluate(noisy, 40, duration<double>(0.1)), StopReason::keep_going);
}

TEST(StopCriterionWithDiscards, ThrottlingCannotDoubleTheTrialBudget) {
  const StopCriterion stop(
      {.min_trials = 10, .max_trials = 50, .max_seconds = 100, .target_rel_noise = 1e-9});
  const auto noisy = normal_samples(20, 100, 20, 6);  // 20 kept, far from converged
  EXPECT_EQ(stop.evaluate(noisy, 99, duration<double>(0.1)), StopReason::keep_going);
  EXPECT_EQ(stop.evaluate(noisy, 100, duration<double>(0.1)), StopReason::max_trials);
}

TEST(StopCriterion, TakesItsRuleFromTimingOptions) {
  TimingOptions options;
  options.min_trials = 7;
  options.max_trials = 70;
  options.max_seconds = 0.7;
  options.target_rel_noise = 0.07;
  const StopRule rule = stop_rule_from(options);
  EXPECT_EQ(rule.min_trials, 7);
  EXPECT_EQ(rule.max_trials, 70);
  EXPECT_DOUBLE_EQ(rule.max_seconds, 0.7);
  EXPECT_DOUBLE_EQ(rule.target_rel_noise, 0.07);
}

TEST(RatioOfMedians, SameDistributionGivesAnIntervalAroundOne) {
  const auto a = normal_samples(200, 100.0, 1.5, 1);
  const auto b = normal_samples(200, 100.0, 1.5, 2);
  const RatioEstimate r = ratio_of_medians(a, b);
  EXPECT_NEAR(r.ratio, 1.0, 0.01);
  EXPECT_LT(r.low, 1.0);
  EXPECT_GT(r.high, 1.0);
  EXPECT_LT(r.high - r.low, 0.02);  // 200 samples at 1.5% noise pin the ratio to about 1%
}

TEST(RatioOfMedians, AClearDifferenceExcludesOneAndTheIntervalBracketsTheRatio) {
  const auto baseline = normal_samples(100, 110.0, 1.0, 3);
  const auto ours = normal_samples(100, 100.0, 1.0, 4);
  const RatioEstimate r = ratio_of_medians(baseline, ours);
  EXPECT_NEAR(r.ratio, 1.10, 0.01);
  EXPECT_GT(r.low, 1.05);
  EXPECT_LE(r.low, r.ratio);
  EXPECT_GE(r.high, r.ratio);
}

TEST(RatioOfMedians, IsDeterministicAndWidensWithFewerSamples) {
  const auto a = normal_samples(400, 50.0, 2.0, 5);
  const auto b = normal_samples(400, 50.0, 2.0, 6);
  const RatioEstimate many = ratio_of_medians(a, b);
  const RatioEstimate again = ratio_of_medians(a, b);
  EXPECT_EQ(many.low, again.low);
  EXPECT_EQ(many.high, again.high);
  const std::vector<double> a_few(a.begin(), a.begin() + 12), b_few(b.begin(), b.begin() + 12);
  const RatioEstimate few = ratio_of_medians(a_few, b_few);
  EXPECT_GT(few.high - few.low, many.high - many.low);
  EXPECT_THROW(ratio_of_medians(std::vector<double>{}, b), std::invalid_argument);
}

}  // namespace
}  // namespace kt
