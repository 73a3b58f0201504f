// Numeric features of a job's candidates for the learning searchers: the template (one-hot), every
// config axis (log2 of its value) and, when every candidate's compile-time report is known, its
// registers, spills, shared memory, threads and the occupancy they allow. Each feature is
// standardised over the candidates, so a distance weighs the axes alike.
#pragma once

#include <vector>

#include "tuner/search/searcher.hpp"

namespace kt::search {

struct FeatureMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> values;  // row-major, rows x cols
  const double* row(std::size_t i) const { return values.data() + i * cols; }
};

FeatureMatrix candidate_features(const std::vector<SearchCandidate>& candidates);

// A searcher's candidate features, rebuilt only when compile-time facts arrived (they change the
// columns: every candidate's report, or none).
class CandidateFeatureCache {
 public:
  const FeatureMatrix& of(const std::vector<SearchCandidate>& candidates);

 private:
  FeatureMatrix features_;
  std::size_t with_facts_ = 0;
};

double squared_distance(const FeatureMatrix& m, std::size_t a, std::size_t b);

// Resident warps per SM a block of `facts` allows on a Hopper-class SM (64K registers,
// 227 KiB shared memory, 64 warps, 32 blocks), over 64: a crude but cheap occupancy.
double occupancy_estimate(const CompileFacts& facts);

}  // namespace kt::search
