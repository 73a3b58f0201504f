#include "tuner/search/boosted_trees.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
    std::vector<Node> tree;  // children appended in pairs: right = left + 1
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
      tree[p.node].x = options.learning_rate * sum / static_cast<double>(n);
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
      node.x = edges[f][best_bin];
      node.left = static_cast<int>(tree.size());
      tree.emplace_back();
      tree.emplace_back();
      pending.push_back({tree[p.node].left + 1, split, p.end, p.depth + 1});
      pending.push_back({tree[p.node].left, p.begin, split, p.depth + 1});
    }
    for (std::size_t r = 0; r < rows; ++r) {
      int at = 0;
      while (tree[at].feature >= 0)
        at = tree[at].left + !(x[r * cols + tree[at].feature] <= tree[at].x);
      residual[r] -= tree[at].x;
    }
    const int offset = static_cast<int>(model.nodes_.size());
    model.roots_.push_back(offset);
    for (Node node : tree) {
      if (node.feature >= 0) node.left += offset;
      model.nodes_.push_back(node);
    }
  }
  model.lay_out_complete();
  return model;
}

void BoostedTrees::lay_out_complete() {
  layout_ = {};
  const auto depth_of = [&](const auto& self, int at) -> int {
    if (nodes_[at].feature < 0) return 0;
    return 1 + std::max(self(self, nodes_[at].left), self(self, nodes_[at].left + 1));
  };
  for (const int root : roots_) {
    BoostedTreesLayout::Tree c;
    c.depth = depth_of(depth_of, root);
    c.splits = layout_.splits.size();
    c.leaves = layout_.leaves.size();
    const std::size_t splits = (std::size_t{1} << c.depth) - 1;
    // A pseudo-split (a leaf above the bottom) sends a row left; both sides hold the leaf.
    layout_.splits.resize(c.splits + splits);
    layout_.leaves.resize(c.leaves + splits + 1, 0.0);
    const auto place = [&](const auto& self, int at, std::size_t heap, int level) -> void {
      if (level == c.depth) {
        layout_.leaves[c.leaves + heap - splits] = nodes_[at].x;
        return;
      }
      const bool split = nodes_[at].feature >= 0;
      if (split) layout_.splits[c.splits + heap] = {nodes_[at].x, nodes_[at].feature};
      self(self, split ? nodes_[at].left : at, 2 * heap + 1, level + 1);
      self(self, split ? nodes_[at].left + 1 : at, 2 * heap + 2, level + 1);
    };
    place(place, root, 0, 0);
    layout_.trees.push_back(c);
  }
}

double BoostedTrees::predict(const double* row) const {
  double out = 0;
  predict(row, 1, &out);
  return out;
}

namespace {

// kRows rows' walks through every tree, level by level across the rows, so their chains of
// dependent loads overlap; kRows is a constant so the row loop unrolls and `at` stays in
// registers.
template <std::size_t kRows>
void walk(const double* const* row, double* value, const BoostedTreesLayout& layout,
          std::size_t first_tree, std::size_t last_tree) {
  for (std::size_t t = first_tree; t < last_tree; ++t) {
    const BoostedTreesLayout::Tree& tree = layout.trees[t];
    const BoostedTreesLayout::Split* split = layout.splits.data() + tree.splits;
    const double* leaf = layout.leaves.data() + tree.leaves - ((std::size_t{1} << tree.depth) - 1);
    std::uint32_t at[kRows] = {};
    for (int d = 0; d < tree.depth; ++d) {
#pragma GCC unroll 16
      for (std::size_t i = 0; i < kRows; ++i) {
        const BoostedTreesLayout::Split& s = split[at[i]];
        at[i] = 2 * at[i] + 1 + static_cast<std::uint32_t>(!(row[i][s.feature] <= s.x));
      }
    }
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kRows; ++i) value[i] += leaf[at[i]];
  }
}

constexpr std::size_t kBlock = 16;  // rows walked together through each tree

// Trees [first_tree, last_tree) added to value[i] for the row at row[i], i < n: blocks of kBlock
// rows, then the rest one at a time (none walked twice).
void walk_rows(const double* const* row, double* value, std::size_t n,
               const BoostedTreesLayout& layout, std::size_t first_tree, std::size_t last_tree) {
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    walk<kBlock>(row + i, value + i, layout, first_tree, last_tree);
  for (; i < n; ++i) walk<1>(row + i, value + i, layout, first_tree, last_tree);
}

}  // namespace

void BoostedTrees::predict(const double* rows, std::size_t n, double* out) const {
  std::vector<const double*> row(n);
  for (std::size_t i = 0; i < n; ++i) {
    row[i] = rows + i * cols_;
    out[i] = base_;
  }
  walk_rows(row.data(), out, n, layout_, 0, layout_.trees.size());
}

std::pair<std::size_t, double> BoostedTrees::lowest(const double* rows, std::size_t n) const {
  if (n == 0) throw std::invalid_argument("boosted trees: lowest of no rows");
  const std::size_t trees = layout_.trees.size();
  // low[t], high[t]: the least and most trees t.. can still add to a row.
  std::vector<double> low(trees + 1, 0.0), high(trees + 1, 0.0);
  for (std::size_t t = trees; t-- > 0;) {
    const BoostedTreesLayout::Tree& tree = layout_.trees[t];
    const auto leaves = layout_.leaves.begin() + static_cast<std::ptrdiff_t>(tree.leaves);
    const auto [lo, hi] = std::minmax_element(leaves, leaves + (std::ptrdiff_t{1} << tree.depth));
    low[t] = low[t + 1] + *lo;
    high[t] = high[t + 1] + *hi;
  }
  // The rows still in the running (their index, their row) and their sums so far.
  std::vector<std::size_t> alive(n);
  std::vector<const double*> row(n);
  std::vector<double> sum(n, base_);
  for (std::size_t i = 0; i < n; ++i) {
    alive[i] = i;
    row[i] = rows + i * cols_;
  }
  constexpr std::size_t kChunk = 25;  // trees between two prunings
  for (std::size_t first_tree = 0; first_tree < trees; first_tree += kChunk) {
    const std::size_t last_tree = std::min(trees, first_tree + kChunk);
    walk_rows(row.data(), sum.data(), alive.size(), layout_, first_tree, last_tree);
    if (last_tree == trees) break;
    // A row whose least possible total is above some row's most possible one cannot be lowest.
    double bound = std::numeric_limits<double>::infinity();
    for (const double s : sum) bound = std::min(bound, s + high[last_tree]);
    bound += 1e-9 * (1.0 + std::fabs(bound));  // the bounds' own rounding
    std::size_t kept = 0;
    for (std::size_t i = 0; i < alive.size(); ++i)
      if (sum[i] + low[last_tree] <= bound) {
        alive[kept] = alive[i];
        row[kept] = row[i];
        sum[kept] = sum[i];
        ++kept;
      }
    alive.resize(kept);
    row.resize(kept);
    sum.resize(kept);
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < alive.size(); ++i)
    if (sum[i] < sum[best]) best = i;
  return {alive[best], sum[best]};
}

std::size_t BoostedTrees::nodes() const {
  return nodes_.size();
}

BoostedTrees BoostedTrees::given(const std::vector<std::pair<std::size_t, double>>& known) const {
  std::vector<char> is_known(cols_, 0);
  std::vector<double> value(cols_, 0.0);
  for (const auto& [feature, v] : known)
    if (feature < cols_) {
      is_known[feature] = 1;
      value[feature] = v;
    }
  BoostedTrees out;
  out.cols_ = cols_;
  out.base_ = base_;
  out.roots_.reserve(roots_.size());
  out.nodes_.reserve(nodes_.size());
  // Writes the subtree at `at` (known splits followed, not copied) into out.nodes_[slot]; its
  // children go in a fresh adjacent pair.
  const auto fill = [&](const auto& self, std::size_t slot, int at) -> void {
    while (nodes_[at].feature >= 0 && is_known[nodes_[at].feature])
      at = nodes_[at].left + !(value[nodes_[at].feature] <= nodes_[at].x);
    Node node = nodes_[at];
    if (node.feature >= 0) {
      const int pair = static_cast<int>(out.nodes_.size());
      out.nodes_.emplace_back();
      out.nodes_.emplace_back();
      self(self, static_cast<std::size_t>(pair), nodes_[at].left);
      self(self, static_cast<std::size_t>(pair) + 1, nodes_[at].left + 1);
      node.left = pair;
    }
    out.nodes_[slot] = node;
  };
  for (const int root : roots_) {
    out.roots_.push_back(static_cast<int>(out.nodes_.size()));
    out.nodes_.emplace_back();
    fill(fill, out.nodes_.size() - 1, root);
  }
  out.lay_out_complete();
  return out;
}

}  // namespace kt::search
