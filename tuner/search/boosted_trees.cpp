#include "tuner/search/boosted_trees.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kt::search {
namespace {

// Split candidates of one feature: the upper edges of its quantile bins (distinct values only).
std::vector<double> bin_edges(const std::vector<double>& x, std::size_t rows, std::size_t cols,
                              std::size_t feature, int bins) {
  std::vector<double> values(rows);
  for (std::size_t r = 0; r < rows; ++r) values[r] = x[r * cols + feature];
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<double> edges;
  if (values.size() <= static_cast<std::size_t>(bins)) {
    for (std::size_t i = 0; i + 1 < values.size(); ++i)
      edges.push_back(0.5 * (values[i] + values[i + 1]));
  } else {
    for (int b = 1; b < bins; ++b) {
      const std::size_t i = values.size() * static_cast<std::size_t>(b) / bins;
      const double edge = 0.5 * (values[i - 1] + values[i]);
      if (edges.empty() || edge > edges.back()) edges.push_back(edge);
    }
  }
  return edges;
}

// The bin of value v among `edges`: the number of edges below it.
std::size_t bin_of(const std::vector<double>& edges, double v) {
  return static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
}

}  // namespace

BoostedTrees BoostedTrees::fit(const std::vector<double>& x, std::size_t cols,
                               const std::vector<double>& y, const BoostingOptions& options) {
  if (cols == 0 || y.empty() || x.size() != y.size() * cols)
    throw std::invalid_argument("boosted trees: need rows x cols features and one target per row");
  const std::size_t rows = y.size();
  BoostedTrees model;
  model.cols_ = cols;
  double mean = 0;
  for (double v : y) mean += v;
  model.base_ = mean / static_cast<double>(rows);

  // Each feature's bins, and every row's bin per feature.
  std::vector<std::vector<double>> edges(cols);
  std::vector<unsigned char> bin(rows * cols);
  for (std::size_t f = 0; f < cols; ++f) {
    edges[f] = bin_edges(x, rows, cols, f, options.bins);
    for (std::size_t r = 0; r < rows; ++r)
      bin[r * cols + f] = static_cast<unsigned char>(bin_of(edges[f], x[r * cols + f]));
  }

  std::vector<double> residual(rows);
  for (std::size_t r = 0; r < rows; ++r) residual[r] = y[r] - model.base_;
  std::vector<std::size_t> order(rows);
  for (int t = 0; t < options.trees; ++t) {
    std::vector<Node> tree;
    // (node, first, last) ranges of `order` still to split, grown depth by depth.
    struct Pending {
      int node;
      std::size_t begin, end;
      int depth;
    };
    for (std::size_t r = 0; r < rows; ++r) order[r] = r;
    std::vector<Pending> pending{{0, 0, rows, 0}};
    tree.emplace_back();
    while (!pending.empty()) {
      const Pending p = pending.back();
      pending.pop_back();
      const std::size_t n = p.end - p.begin;
      double sum = 0;
      for (std::size_t i = p.begin; i < p.end; ++i) sum += residual[order[i]];
      tree[p.node].value = options.learning_rate * sum / static_cast<double>(n);
      if (p.depth >= options.depth || n < 2 * options.min_leaf) continue;
      // The split of largest squared-error reduction: sum_l^2/n_l + sum_r^2/n_r - sum^2/n.
      double best_gain = 1e-12;
      int best_feature = -1;
      std::size_t best_bin = 0;
      std::vector<double> bin_sum;
      std::vector<std::size_t> bin_count;
      for (std::size_t f = 0; f < cols; ++f) {
        const std::size_t nb = edges[f].size() + 1;
        if (nb < 2) continue;
        bin_sum.assign(nb, 0.0);
        bin_count.assign(nb, 0);
        for (std::size_t i = p.begin; i < p.end; ++i) {
          const std::size_t r = order[i];
          bin_sum[bin[r * cols + f]] += residual[r];
          ++bin_count[bin[r * cols + f]];
        }
        double left_sum = 0;
        std::size_t left_count = 0;
        for (std::size_t b = 0; b + 1 < nb; ++b) {
          left_sum += bin_sum[b];
          left_count += bin_count[b];
          const std::size_t right_count = n - left_count;
          if (left_count < options.min_leaf || right_count < options.min_leaf) continue;
          const double right_sum = sum - left_sum;
          const double gain = left_sum * left_sum / static_cast<double>(left_count) +
                              right_sum * right_sum / static_cast<double>(right_count) -
                              sum * sum / static_cast<double>(n);
          if (gain > best_gain) {
            best_gain = gain;
            best_feature = static_cast<int>(f);
            best_bin = b;
          }
        }
      }
      if (best_feature < 0) continue;
      const auto f = static_cast<std::size_t>(best_feature);
      const auto middle =
          std::stable_partition(order.begin() + static_cast<std::ptrdiff_t>(p.begin),
                                order.begin() + static_cast<std::ptrdiff_t>(p.end),
                                [&](std::size_t r) { return bin[r * cols + f] <= best_bin; });
      const auto split = static_cast<std::size_t>(middle - order.begin());
      Node& node = tree[p.node];
      node.feature = best_feature;
      node.threshold = edges[f][best_bin];
      node.left = static_cast<int>(tree.size());
      node.right = static_cast<int>(tree.size() + 1);
      tree.emplace_back();
      tree.emplace_back();
      pending.push_back({tree[p.node].right, split, p.end, p.depth + 1});
      pending.push_back({tree[p.node].left, p.begin, split, p.depth + 1});
    }
    model.trees_.push_back(std::move(tree));
    const BoostedTrees& m = model;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<Node>& last = m.trees_.back();
      int at = 0;
      while (last[at].feature >= 0)
        at = x[r * cols + last[at].feature] <= last[at].threshold ? last[at].left : last[at].right;
      residual[r] -= last[at].value;
    }
  }
  return model;
}

double BoostedTrees::predict(const double* row) const {
  double value = base_;
  for (const std::vector<Node>& tree : trees_) {
    int at = 0;
    while (tree[at].feature >= 0)
      at = row[tree[at].feature] <= tree[at].threshold ? tree[at].left : tree[at].right;
    value += tree[at].value;
  }
  return value;
}

}  // namespace kt::search
