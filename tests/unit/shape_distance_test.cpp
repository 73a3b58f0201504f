// The distance between shapes that picks the nearest tuned shape (tuner/shape_distance.cpp).
#include "tuner/shape_distance.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(ShapeDistance, SumsTheAbsoluteLogRatioOfEveryDim) {
  const Shape a{{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_DOUBLE_EQ(*shape_distance(a, a), 0.0);
  const Shape b{{"M", 2048}, {"N", 4096}, {"K", 8192}};
  EXPECT_NEAR(*shape_distance(a, b), 2 * std::log(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(*shape_distance(a, b), *shape_distance(b, a));
  // Scale-free: 64 -> 128 is as far as 4096 -> 8192.
  EXPECT_DOUBLE_EQ(*shape_distance({{"M", 64}}, {{"M", 128}}),
                   *shape_distance({{"M", 4096}}, {{"M", 8192}}));
}

TEST(ShapeDistance, ShapesOfOtherDimsOrAnotherFlagAreNotComparable) {
  EXPECT_FALSE(shape_distance({{"M", 1}, {"N", 2}}, {{"M", 1}, {"K", 2}}));
  EXPECT_FALSE(shape_distance({{"M", 1}}, {{"M", 1}, {"N", 2}}));
  const Shape causal{{"b", 4}, {"causal", 1}, {"s", 4096}};
  const Shape plain{{"b", 4}, {"causal", 0}, {"s", 4096}};
  EXPECT_FALSE(shape_distance(causal, plain));
  const Shape plain_longer{{"b", 4}, {"causal", 0}, {"s", 8192}};
  EXPECT_NEAR(*shape_distance(plain, plain_longer), std::log(2.0), 1e-12)
      << "an equal zero dim adds nothing";
}

}  // namespace
}  // namespace kt
