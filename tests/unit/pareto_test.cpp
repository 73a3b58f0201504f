#include "tuner/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace kt {
namespace {

ParetoPoint point(std::int64_t id, double time, double error, double footprint) {
  return ParetoPoint{id, time, error, footprint};
}

std::vector<std::int64_t> ids(const std::vector<ParetoPoint>& points) {
  std::vector<std::int64_t> out;
  for (const auto& p : points) out.push_back(p.variant_id);
  return out;
}

// The definition itself: every point no other point dominates, by median then id.
std::vector<ParetoPoint> brute_force_front(const std::vector<ParetoPoint>& points) {
  std::vector<ParetoPoint> front;
  for (const auto& candidate : points) {
    bool dominated = false;
    for (const auto& other : points) dominated = dominated || dominates(other, candidate);
    if (!dominated) front.push_back(candidate);
  }
  std::stable_sort(front.begin(), front.end(), [](const auto& a, const auto& b) {
    return std::tie(a.median_us, a.variant_id) < std::tie(b.median_us, b.variant_id);
  });
  return front;
}

TEST(Dominates, BetterInOneAndEqualElsewhereDominates) {
  EXPECT_TRUE(dominates(point(1, 1, 0.1, 100), point(2, 2, 0.1, 100)));
  EXPECT_TRUE(dominates(point(1, 1, 0.05, 100), point(2, 1, 0.1, 100)));
  EXPECT_TRUE(dominates(point(1, 1, 0.1, 50), point(2, 1, 0.1, 100)));
  EXPECT_FALSE(dominates(point(2, 2, 0.1, 100), point(1, 1, 0.1, 100)));
}

TEST(Dominates, EqualPointsDoNotDominateEachOther) {
  EXPECT_FALSE(dominates(point(1, 1, 0.1, 100), point(2, 1, 0.1, 100)));
  EXPECT_FALSE(dominates(point(2, 1, 0.1, 100), point(1, 1, 0.1, 100)));
}

TEST(Dominates, TradeOffsDoNotDominate) {
  const auto fast_inaccurate = point(1, 1, 0.5, 100);
  const auto slow_accurate = point(2, 2, 0.1, 100);
  EXPECT_FALSE(dominates(fast_inaccurate, slow_accurate));
  EXPECT_FALSE(dominates(slow_accurate, fast_inaccurate));
}

TEST(Dominates, NanRanksWorstSoARealPointDominatesIt) {
  const auto nan_error = point(1, 1, std::nan(""), 100);
  EXPECT_TRUE(dominates(point(2, 1, 0.1, 100), nan_error));
  EXPECT_FALSE(dominates(nan_error, point(2, 1, 0.1, 100)));
}

TEST(ParetoFront, EmptyInputGivesEmptyFront) {
  EXPECT_TRUE(pareto_front({}).empty());
}

TEST(ParetoFront, SinglePointIsItsOwnFront) {
  EXPECT_EQ(ids(pareto_front({point(7, 3, 0.1, 10)})), std::vector<std::int64_t>{7});
}

TEST(ParetoFront, DropsDominatedAndKeepsTradeOffsSortedByTime) {
  const auto front = pareto_front({
      point(1, 5, 0.1, 100),  // slowest but most accurate: kept
      point(2, 1, 0.9, 100),  // fastest: kept
      point(3, 3, 0.5, 100),  // middle trade-off: kept
      point(4, 3, 0.6, 100),  // dominated by 3
      point(5, 6, 0.2, 200),  // dominated by 1
      point(6, 2, 0.9, 50),   // smallest footprint: kept
  });
  EXPECT_EQ(ids(front), (std::vector<std::int64_t>{2, 6, 3, 1}));
}

TEST(ParetoFront, ExactDuplicatesAreAllKept) {
  const auto front =
      pareto_front({point(9, 2, 0.1, 10), point(4, 2, 0.1, 10), point(5, 3, 0.2, 20)});
  EXPECT_EQ(ids(front), (std::vector<std::int64_t>{4, 9}));
}

TEST(ParetoFront, EqualTimesAreOrderedByIdAndPartialTiesStillDominate) {
  const auto front = pareto_front({
      point(8, 2, 0.1, 30), point(3, 2, 0.3, 10),
      point(5, 2, 0.3, 30),  // same time, dominated by both 8 and 3
  });
  EXPECT_EQ(ids(front), (std::vector<std::int64_t>{3, 8}));
}

TEST(ParetoFront, AddingADominatingPointEvictsEverythingItBeats) {
  std::vector<ParetoPoint> points{point(1, 5, 0.2, 100), point(2, 4, 0.3, 100)};
  ASSERT_EQ(pareto_front(points).size(), 2u);
  points.push_back(point(3, 1, 0.1, 50));
  EXPECT_EQ(ids(pareto_front(points)), std::vector<std::int64_t>{3});
}

TEST(ParetoFront, MatchesTheBruteForceDefinitionOnRandomInputs) {
  std::mt19937_64 rng(12345);
  // Few distinct values per objective so ties and duplicates are common.
  std::uniform_int_distribution<int> value(0, 5);
  std::uniform_int_distribution<int> count(0, 40);
  for (int round = 0; round < 500; ++round) {
    std::vector<ParetoPoint> points;
    const int n = count(rng);
    for (int i = 0; i < n; ++i)
      points.push_back(point(i, value(rng), value(rng) * 0.1, value(rng) * 1024.0));
    std::shuffle(points.begin(), points.end(), rng);

    const auto front = pareto_front(points);
    const auto expected = brute_force_front(points);
    ASSERT_EQ(ids(front), ids(expected)) << "round " << round;
    for (const auto& a : front)
      for (const auto& b : front) ASSERT_FALSE(dominates(a, b)) << "round " << round;
  }
}

}  // namespace
}  // namespace kt
