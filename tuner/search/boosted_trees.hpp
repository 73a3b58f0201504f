// Gradient-boosted regression trees for the shape predictor: squared loss, depth-limited trees
// whose splits are searched over per-feature quantile bins (histograms), so a fit over tens of
// thousands of recorded variants takes a fraction of a second. Deterministic: no sampling, ties
// broken by feature and bin order.
//
// Why not a library: Debian's libxgboost-dev would fit the same model, but the predictor needs a
// few hundred lines and bit-for-bit reproducible answers in the daemon and in CPU tests, and the
// data are small; a dependency with its own threading and versions buys nothing here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace kt::search {

struct BoostingOptions {
  int trees = 300;
  int depth = 5;
  double learning_rate = 0.08;
  std::size_t min_leaf = 8;  // samples a leaf must keep
  int bins = 32;             // quantile bins per feature
};

// The trees as predict() walks them: each laid out complete to its depth, so a row takes exactly
// `depth` steps of index = 2 * index + 1 + (goes right), with no branch to mispredict. A leaf above
// the bottom fills every bottom slot under it, so either way leads to its value.
struct BoostedTreesLayout {
  struct Split {  // 16 bytes: a step reads one cache line, not two
    double x = std::numeric_limits<double>::infinity();  // row[feature] <= x goes left
    std::int32_t feature = 0;
  };
  struct Tree {
    int depth = 0;
    std::size_t splits = 0;  // first of its 2^depth - 1 splits
    std::size_t leaves = 0;  // first of its 2^depth leaves
  };
  std::vector<Tree> trees;
  std::vector<Split> splits;
  std::vector<double> leaves;
};

class BoostedTrees {
 public:
  // x is row-major, rows x cols; y one target per row. Throws std::invalid_argument on a size
  // mismatch or no rows.
  static BoostedTrees fit(const std::vector<double>& x, std::size_t cols,
                          const std::vector<double>& y, const BoostingOptions& options = {});

  double predict(const double* row) const;
  // predict() of each of `n` rows (row-major, cols() each) into out[0..n): the same values, to the
  // bit, walked a block of rows per tree so the walks overlap.
  void predict(const double* rows, std::size_t n, double* out) const;
  // The row of the `n` whose predict() is lowest (the first of equals) and that value, to the bit,
  // without walking every row through every tree: after each few trees, a row that cannot come
  // below another whatever the trees left add is dropped. Throws std::invalid_argument for n = 0.
  std::pair<std::size_t, double> lowest(const double* rows, std::size_t n) const;
  // The same model for rows whose features `known` (index, value) hold those values: each split on
  // one of them decided once, so a row walks only the others'. predict() of such a row gives the
  // same value, to the bit (the same leaves, summed in the same order). The shape predictor ranks
  // a shape's thousands of candidates with its model given the shape.
  BoostedTrees given(const std::vector<std::pair<std::size_t, double>>& known) const;
  std::size_t cols() const { return cols_; }
  std::size_t nodes() const;  // over all trees

 private:
  // 16 bytes: a split's children are adjacent (left, left + 1), a leaf keeps its value in x.
  struct Node {
    double x = 0;      // a split's threshold (row[feature] <= x goes left), a leaf's value
    int feature = -1;  // -1: a leaf
    int left = -1;
  };
  std::size_t cols_ = 0;
  double base_ = 0;
  std::vector<Node> nodes_;  // every tree's, one after the other
  std::vector<int> roots_;   // each tree's root in nodes_, in boosting order

  void lay_out_complete();
  BoostedTreesLayout layout_;
};

}  // namespace kt::search
