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
#include <vector>

namespace kt::search {

struct BoostingOptions {
  int trees = 300;
  int depth = 5;
  double learning_rate = 0.08;
  std::size_t min_leaf = 8;  // samples a leaf must keep
  int bins = 32;             // quantile bins per feature
};

class BoostedTrees {
 public:
  // x is row-major, rows x cols; y one target per row. Throws std::invalid_argument on a size
  // mismatch or no rows.
  static BoostedTrees fit(const std::vector<double>& x, std::size_t cols,
                          const std::vector<double>& y, const BoostingOptions& options = {});

  double predict(const double* row) const;
  std::size_t cols() const { return cols_; }

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    double threshold = 0;
    int left = -1, right = -1;
    double value = 0;
  };
  std::size_t cols_ = 0;
  double base_ = 0;
  std::vector<std::vector<Node>> trees_;
};

}  // namespace kt::search
