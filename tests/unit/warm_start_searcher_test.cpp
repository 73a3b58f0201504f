// A warm-started searcher measures its seeds first, then its own searcher goes on
// (tuner/search/warm_start.cpp).
#include "tuner/search/warm_start.hpp"

#include <set>

#include <gtest/gtest.h>

namespace kt {
namespace {

std::vector<SearchCandidate> space(int n) {
  std::vector<SearchCandidate> out;
  for (int i = 0; i < n; ++i) out.push_back({"t", {{"X", i}}, std::nullopt});
  return out;
}

TEST(WarmStartSearcher, SeedsComeFirstInTheirOrderThenTheInnerSearcherFillsTheBatch) {
  const auto candidates = space(50);
  std::vector<SearchObservation> observations;
  std::vector<bool> taken(candidates.size(), false);
  taken[7] = true;  // already handed out: never again
  auto searcher = seeded_first(make_searcher("local", 3), {30, 7, 12, 30, 99, 41});
  EXPECT_EQ(searcher->name(), "local");

  const auto first = searcher->propose({candidates, observations, taken}, 2);
  EXPECT_EQ(first, (std::vector<std::size_t>{30, 12}));
  for (std::size_t i : first) {
    taken[i] = true;
    observations.push_back({i, 10.0 + static_cast<double>(i)});
  }
  // One seed left (41; 99 is no candidate): the rest of the batch is the local searcher's.
  const auto second = searcher->propose({candidates, observations, taken}, 8);
  ASSERT_EQ(second.size(), 8u);
  EXPECT_EQ(second[0], 41u);
  std::set<std::size_t> distinct(second.begin(), second.end());
  EXPECT_EQ(distinct.size(), second.size());
  for (std::size_t i : second) EXPECT_FALSE(taken[i]) << i << " was taken";
}

TEST(WarmStartSearcher, OnlyLearningSearchersAreWarmStarted) {
  EXPECT_TRUE(learns_from_measurements("local"));
  EXPECT_TRUE(learns_from_measurements("model"));
  EXPECT_FALSE(learns_from_measurements("random"));
  EXPECT_FALSE(learns_from_measurements("exhaustive"));
}

}  // namespace
}  // namespace kt
