#include "tuner/search/features.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

namespace kt::search {

double occupancy_estimate(const CompileFacts& f) {
  if (f.threads <= 0) return 0;
  const int warps = (f.threads + 31) / 32;
  int blocks = std::min(32, 64 / std::max(1, warps));
  if (f.registers > 0) blocks = std::min(blocks, 65536 / (std::max(f.registers, 1) * 32 * warps));
  if (f.smem_bytes > 0) blocks = std::min(blocks, (227 * 1024) / f.smem_bytes);
  return static_cast<double>(std::max(blocks, 0) * warps) / 64.0;
}

namespace {

double log_value(std::int64_t v) {
  return v >= 0 ? std::log2(1.0 + static_cast<double>(v))
                : -std::log2(1.0 - static_cast<double>(v));
}

}  // namespace

FeatureMatrix candidate_features(const std::vector<SearchCandidate>& candidates) {
  std::vector<std::string> templates;
  std::set<std::string> axis_set;
  bool all_facts = !candidates.empty();
  for (const SearchCandidate& c : candidates) {
    if (std::find(templates.begin(), templates.end(), c.template_name) == templates.end())
      templates.push_back(c.template_name);
    for (const auto& [axis, value] : c.config) axis_set.insert(c.template_name + "." + axis);
    if (!c.facts || c.facts->threads <= 0) all_facts = false;
  }
  const std::vector<std::string> axes(axis_set.begin(), axis_set.end());
  const std::size_t fact_cols = all_facts ? 5 : 0;
  const std::size_t one_hot = templates.size() > 1 ? templates.size() : 0;
  FeatureMatrix m;
  m.rows = candidates.size();
  m.cols = one_hot + axes.size() + fact_cols;
  m.values.assign(m.rows * m.cols, 0.0);
  std::map<std::string, std::size_t> axis_col;
  for (std::size_t a = 0; a < axes.size(); ++a) axis_col[axes[a]] = one_hot + a;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const SearchCandidate& c = candidates[i];
    double* row = m.values.data() + i * m.cols;
    if (one_hot > 0)
      row[std::find(templates.begin(), templates.end(), c.template_name) - templates.begin()] = 1;
    for (const auto& [axis, value] : c.config)
      row[axis_col[c.template_name + "." + axis]] = log_value(value);
    if (fact_cols > 0) {
      const CompileFacts& f = *c.facts;
      double* facts = row + one_hot + axes.size();
      facts[0] = f.registers;
      facts[1] = std::log2(1.0 + std::max(f.spill_bytes, 0));
      facts[2] = std::log2(1.0 + std::max(f.smem_bytes, 0));
      facts[3] = std::log2(1.0 + f.threads);
      facts[4] = occupancy_estimate(f);
    }
  }
  // Standardise each column; a constant one carries nothing and is zeroed.
  for (std::size_t col = 0; col < m.cols; ++col) {
    double mean = 0;
    for (std::size_t i = 0; i < m.rows; ++i) mean += m.values[i * m.cols + col];
    mean /= static_cast<double>(std::max<std::size_t>(m.rows, 1));
    double var = 0;
    for (std::size_t i = 0; i < m.rows; ++i) {
      const double d = m.values[i * m.cols + col] - mean;
      var += d * d;
    }
    const double sd = std::sqrt(var / static_cast<double>(std::max<std::size_t>(m.rows, 1)));
    for (std::size_t i = 0; i < m.rows; ++i) {
      double& v = m.values[i * m.cols + col];
      v = sd > 1e-12 ? (v - mean) / sd : 0.0;
    }
  }
  return m;
}

double squared_distance(const FeatureMatrix& m, std::size_t a, std::size_t b) {
  const double* x = m.row(a);
  const double* y = m.row(b);
  double sum = 0;
  for (std::size_t k = 0; k < m.cols; ++k) {
    const double d = x[k] - y[k];
    sum += d * d;
  }
  return sum;
}

const FeatureMatrix& CandidateFeatureCache::of(const std::vector<SearchCandidate>& candidates) {
  std::size_t with_facts = 0;
  for (const SearchCandidate& c : candidates) with_facts += c.facts ? 1 : 0;
  if (features_.rows != candidates.size() || with_facts != with_facts_) {
    features_ = candidate_features(candidates);
    with_facts_ = with_facts;
  }
  return features_;
}

}  // namespace kt::search
