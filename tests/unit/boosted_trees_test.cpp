// The shape predictor's boosted trees (tuner/search/boosted_trees.hpp): they learn a step and a
// slope from exact samples, refuse malformed input, and the same data give the same model.
#include "tuner/search/boosted_trees.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace kt::search {
namespace {

// y = 2 [x0 > 0.3] + x1 on a grid of (x0, x1) in [0, 1)^2, with a third feature that carries
// nothing.
void sample(std::vector<double>& x, std::vector<double>& y) {
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 20; ++j) {
      const double x0 = i / 40.0, x1 = j / 20.0, unrelated = (i * 7 + j * 3) % 5;
      x.insert(x.end(), {x0, x1, unrelated});
      y.push_back((x0 > 0.3 ? 2.0 : 0.0) + x1);
    }
}

TEST(BoostedTrees, LearnsAStepAndASlope) {
  std::vector<double> x, y;
  sample(x, y);
  const BoostedTrees model = BoostedTrees::fit(x, 3, y);
  double worst = 0;
  for (std::size_t r = 0; r < y.size(); ++r)
    worst = std::max(worst, std::abs(model.predict(&x[r * 3]) - y[r]));
  EXPECT_LT(worst, 0.15) << "the step at 0.3 and the slope of x1 are learned";
  const double left[3] = {0.1, 0.5, 0}, right[3] = {0.9, 0.5, 0};
  EXPECT_NEAR(model.predict(right) - model.predict(left), 2.0, 0.15);
}

TEST(BoostedTrees, SameDataSameModel) {
  std::vector<double> x, y;
  sample(x, y);
  const BoostedTrees a = BoostedTrees::fit(x, 3, y), b = BoostedTrees::fit(x, 3, y);
  for (std::size_t r = 0; r < y.size(); r += 17)
    EXPECT_EQ(a.predict(&x[r * 3]), b.predict(&x[r * 3])) << "bit for bit: no sampling";
}

TEST(BoostedTrees, AModelGivenAFeaturesValuePredictsTheSameToTheBit) {
  std::vector<double> x, y;
  sample(x, y);
  const BoostedTrees model = BoostedTrees::fit(x, 3, y);
  for (const double x0 : {0.05, 0.3, 0.31, 0.9}) {
    const BoostedTrees given = model.given({{0, x0}});
    EXPECT_LT(given.nodes(), model.nodes()) << "the splits on x0 are gone";
    for (std::size_t r = 0; r < y.size(); r += 7) {
      const double row[3] = {x0, x[r * 3 + 1], x[r * 3 + 2]};
      EXPECT_EQ(given.predict(row), model.predict(row)) << "x0 = " << x0 << ", row " << r;
    }
  }
  // Rows in a batch: each the value predict() gives it alone, to the bit (blocks of 16 and a rest).
  const std::size_t rows = 37;
  std::vector<double> batch(rows, 0.0);
  model.predict(x.data(), rows, batch.data());
  for (std::size_t r = 0; r < rows; ++r) EXPECT_EQ(batch[r], model.predict(&x[r * 3])) << r;
  // A feature past the model's columns is ignored, not read.
  EXPECT_EQ(model.given({{7, 1.0}}).nodes(), model.nodes());
}

// lowest() drops rows as it goes but answers what predicting every row and taking the first
// lowest would: the same row and value, to the bit, ties included.
TEST(BoostedTrees, TheLowestRowIsTheFirstLowestOfEveryPrediction) {
  std::vector<double> x, y;
  sample(x, y);
  const BoostedTrees model = BoostedTrees::fit(x, 3, y);
  const std::size_t rows = y.size();
  std::vector<double> all(rows);
  model.predict(x.data(), rows, all.data());
  for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{17}, rows}) {
    // The rows reversed, so the lowest is not simply the first one.
    std::vector<double> picked;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = rows - 1 - (i * 37) % rows;
      picked.insert(picked.end(), &x[r * 3], &x[r * 3] + 3);
    }
    std::vector<double> predicted(n);
    model.predict(picked.data(), n, predicted.data());
    std::size_t expected = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (predicted[i] < predicted[expected]) expected = i;
    const auto [row, value] = model.lowest(picked.data(), n);
    EXPECT_EQ(row, expected) << n << " rows";
    EXPECT_EQ(value, predicted[expected]) << n << " rows";
  }
  // Equal rows: the first of them.
  std::vector<double> same;
  for (int i = 0; i < 40; ++i) same.insert(same.end(), {0.9, 0.95, 1.0});
  same.insert(same.begin(), {0.1, 0.0, 1.0});  // the lowest, first
  same.insert(same.end(), {0.1, 0.0, 1.0});    // and again, last
  EXPECT_EQ(model.lowest(same.data(), 42).first, 0u);
  EXPECT_THROW(model.lowest(same.data(), 0), std::invalid_argument);
}

TEST(BoostedTrees, RefusesMalformedInput) {
  EXPECT_THROW(BoostedTrees::fit({1, 2, 3}, 2, {1, 2}), std::invalid_argument);
  EXPECT_THROW(BoostedTrees::fit({}, 1, {}), std::invalid_argument);
  EXPECT_THROW(BoostedTrees::fit({1, 2}, 0, {1, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace kt::search
