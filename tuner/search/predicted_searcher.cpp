// The predicted searcher: measures the shape predictor's ranking first (each candidate's
// `predicted` score, from a model fitted on other shapes: shape_predictor.hpp) and corrects it
// with what it measures. A candidate's corrected score is its prediction plus the mean residual
// (measured less predicted log time) of the job so far and the inverse-distance-weighted residuals
// of its nearest measured neighbours (features.hpp's standardised config and resource features),
// shrunk towards that mean: a template or tile size the model misjudges for this shape moves as a
// group, a config far from every measurement keeps the model's ranking. Part of each batch goes to
// the untried one-axis neighbours of the best measured configs, in corrected order, because the
// model ranks families of configs better than their exact tile. It stops (proposes nothing) once
// kMinMeasured variants ran and no untried candidate is predicted to beat the best measured by
// more than the noise. Without predictions (no model for the family, dtype and GPU) it is the
// local searcher.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/search/features.hpp"
#include "tuner/search/searchers.hpp"

namespace kt::search {
namespace {

constexpr std::size_t kNeighbours = 4;
// Weight of the job's mean residual against the neighbours' (in inverse standardised distance):
// a neighbour at distance 1 counts as much as the mean.
constexpr double kShrink = 1.0;
// The share of the mean residual taken as the model's error on the whole shape; the rest is
// local to what was measured, so configs far from every measurement keep their predicted place.
constexpr double kGlobalShare = 1.0;
// Of each later batch, this fraction goes to one-axis neighbours of the best measured configs.
constexpr double kNeighbourShare = 0.5;
constexpr std::size_t kParents = 3;
constexpr std::size_t kMinMeasured = 16;
constexpr double kNoise = 0.01;
// Stop once the largest expected improvement (in log time, below the best less the noise) of an
// untried candidate is under this; the model's error on this shape is the spread of the
// residuals measured, at least kMinSpread.
constexpr double kStopGain = 0.002;
constexpr double kMinSpread = 0.15;

class PredictedSearcher final : public Searcher {
 public:
  explicit PredictedSearcher(std::uint64_t seed) : fallback_(make_local(seed)) {}
  std::string_view name() const override { return "predicted"; }

  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    const std::vector<SearchCandidate>& candidates = state.candidates;
    const std::size_t n = candidates.size();
    const bool predicted = std::all_of(candidates.begin(), candidates.end(),
                                       [](const SearchCandidate& c) { return c.predicted; });
    if (n == 0 || !predicted) return fallback_->propose(state, count);

    const std::vector<double> corrected = corrected_scores(state);
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < n; ++c)
      if (!state.taken[c]) order.push_back(c);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return corrected[a] < corrected[b]; });

    std::vector<std::pair<double, std::size_t>> measured;  // (time, candidate), fastest first
    for (const SearchObservation& o : state.observations)
      if (o.time_us) measured.emplace_back(*o.time_us, o.candidate);
    std::sort(measured.begin(), measured.end());
    if (measured.size() >= kMinMeasured && !order.empty() &&
        expected_gain(corrected, order, std::log(measured.front().first * (1.0 - kNoise))) <
            kStopGain)
      return {};  // what is left is not expected to improve by more than the noise

    std::vector<std::size_t> out;
    std::vector<bool> picked(n, false);
    const auto take = [&](std::size_t c) {
      if (picked[c] || state.taken[c] || out.size() >= count) return;
      picked[c] = true;
      out.push_back(c);
    };
    if (!measured.empty()) {
      const auto share = static_cast<std::size_t>(static_cast<double>(count) * kNeighbourShare);
      for (std::size_t p = 0; p < std::min(kParents, measured.size()) && out.size() < share; ++p)
        for (std::size_t c : order) {
          if (out.size() >= share) break;
          if (one_axis_apart(candidates[c], candidates[measured[p].second])) take(c);
        }
    }
    for (std::size_t c : order) {
      if (out.size() >= count) break;
      take(c);
    }
    return out;
  }

 private:
  // The largest expected improvement below `target` among the untried (`order`).
  double expected_gain(const std::vector<double>& corrected, const std::vector<std::size_t>& order,
                       double target) const {
    double best = 0;
    for (std::size_t c : order) {
      const double z = (target - corrected[c]) / spread_;
      best = std::max(best, expected_improvement(z, spread_));
    }
    return best;
  }

  // Each candidate's predicted log time on the job's own scale (what was measured corrects it).
  std::vector<double> corrected_scores(const SearchState& state) {
    const std::vector<SearchCandidate>& candidates = state.candidates;
    const std::size_t n = candidates.size();
    std::vector<double> out(n);
    for (std::size_t c = 0; c < n; ++c) out[c] = *candidates[c].predicted;
    if (state.observations.empty()) return out;

    const FeatureMatrix& features = features_.of(candidates);
    const std::vector<double> y = observed_log_times(state);
    std::vector<double> residual(state.observations.size());
    double mean = 0;
    std::size_t succeeded = 0;
    for (std::size_t o = 0; o < residual.size(); ++o) {
      residual[o] = y[o] - *candidates[state.observations[o].candidate].predicted;
      if (state.observations[o].time_us) {
        mean += residual[o];
        ++succeeded;
      }
    }
    mean = succeeded ? mean / static_cast<double>(succeeded) : 0.0;
    const double global = kGlobalShare * mean;
    double variance = 0;
    for (std::size_t o = 0; o < residual.size(); ++o)
      if (state.observations[o].time_us) variance += (residual[o] - mean) * (residual[o] - mean);
    spread_ = std::max(
        kMinSpread, succeeded > 1 ? std::sqrt(variance / static_cast<double>(succeeded - 1)) : 0);

    std::vector<std::pair<double, std::size_t>> near;
    for (std::size_t c = 0; c < n; ++c) {
      near.clear();
      for (std::size_t o = 0; o < state.observations.size(); ++o)
        near.emplace_back(squared_distance(features, c, state.observations[o].candidate), o);
      const std::size_t k = std::min(kNeighbours, near.size());
      std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
      double wsum = kShrink, local = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const double w = 1.0 / (std::sqrt(near[j].first) + 1e-3);
        wsum += w;
        local += w * (residual[near[j].second] - global);
      }
      out[c] += global + local / wsum;
    }
    return out;
  }

  std::unique_ptr<Searcher> fallback_;
  CandidateFeatureCache features_;
  double spread_ = kMinSpread;  // the model's error on this shape, log time
};

}  // namespace

std::unique_ptr<Searcher> make_predicted(std::uint64_t seed) {
  return std::make_unique<PredictedSearcher>(seed);
}

}  // namespace kt::search
