#include "worker/winner_comparison.hpp"

#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace kt {
namespace {

std::vector<double> normal_samples(int n, double mean_us, double sigma_us, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(mean_us, sigma_us);
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(dist(rng));
  return samples;
}

TEST(WinnerComparison, ClearlyFasterWinnerIsDistinguishable) {
  // 100 us vs 103 us, 0.5% noise each, 200 samples: 3% apart, intervals far narrower.
  const InterleavedResult r = compare_candidates(
      {7, 9}, {normal_samples(200, 103, 0.5, 1), normal_samples(200, 100, 0.5, 2)});
  EXPECT_EQ(r.winner_variant_id, 9);
  EXPECT_EQ(r.runner_up_variant_id, 7);
  EXPECT_TRUE(r.distinguishable) << r.reason;
  EXPECT_NEAR(r.margin, 0.03, 0.002);
  EXPECT_NE(r.reason.find("distinguishable"), std::string::npos) << r.reason;
}

TEST(WinnerComparison, NearTieWithinTheNoiseIsNotDistinguishable) {
  // 0.1% apart with 2% noise and 50 samples: the medians' intervals overlap.
  const InterleavedResult r =
      compare_candidates({1, 2, 3}, {normal_samples(50, 100.1, 2, 3), normal_samples(50, 100, 2, 4),
                                     normal_samples(50, 120, 2, 5)});
  EXPECT_NE(r.winner_variant_id, 3);
  EXPECT_NE(r.runner_up_variant_id, 3);
  EXPECT_FALSE(r.distinguishable) << r.reason;
  EXPECT_LT(r.margin, 0.02);
  EXPECT_GE(r.margin, 0.0);
  EXPECT_NE(r.reason.find("overlap"), std::string::npos) << r.reason;
}

TEST(WinnerComparison, RanksByMedianNotMean) {
  // B has a lower mean because of A's outliers, but A's median is lower.
  std::vector<double> a(40, 10.0);
  for (int i = 0; i < 5; ++i) a.push_back(100.0);
  const std::vector<double> b(45, 11.0);
  const InterleavedResult r = compare_candidates({100, 200}, {a, b});
  EXPECT_EQ(r.winner_variant_id, 100);
  EXPECT_TRUE(r.distinguishable);
  EXPECT_NEAR(r.margin, 0.1, 1e-12);
}

TEST(WinnerComparison, IdenticalSamplesTouchingIntervalsAreATie) {
  const std::vector<double> same(30, 42.0);
  const InterleavedResult r = compare_candidates({5, 6}, {same, same});
  EXPECT_EQ(r.winner_variant_id, 5);  // ties keep request order
  EXPECT_EQ(r.runner_up_variant_id, 6);
  EXPECT_FALSE(r.distinguishable);
  EXPECT_DOUBLE_EQ(r.margin, 0);
}

TEST(WinnerComparison, OneCandidateWinsAlone) {
  const InterleavedResult r = compare_candidates({4}, {{1.0, 2.0, 3.0}});
  EXPECT_EQ(r.winner_variant_id, 4);
  EXPECT_EQ(r.runner_up_variant_id, 0);
  EXPECT_FALSE(r.distinguishable);
}

TEST(WinnerComparison, RejectsMalformedInput) {
  EXPECT_THROW(compare_candidates({}, {}), std::invalid_argument);
  EXPECT_THROW(compare_candidates({1, 2}, {{1.0}}), std::invalid_argument);
  EXPECT_THROW(compare_candidates({1, 2}, {{1.0}, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace kt
