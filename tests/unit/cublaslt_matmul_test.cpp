// The order in which a library baseline falls back when its choice computes a wrong result:
// fastest median first, ties in the heuristic's order (pure host code; the GPU test of the
// fallback itself is tests/gpu/baseline_test.cpp).
#include <gtest/gtest.h>

#include "worker/cublaslt_matmul.hpp"

namespace kt {
namespace {

TEST(FastestFirst, RanksEveryAlgorithmByItsMedianKeepingTheHeuristicsOrderOnTies) {
  EXPECT_EQ(fastest_first({12.5, 9.0, 30.0, 9.0, 11.0}),
            (std::vector<std::size_t>{1, 3, 4, 0, 2}));
  EXPECT_EQ(fastest_first({7.0}), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(fastest_first({}).empty());
  EXPECT_EQ(fastest_first({3.0, 2.0, 1.0}).front(), fastest({3.0, 2.0, 1.0}))
      << "the first candidate is the one timing chose";
}

}  // namespace
}  // namespace kt
