// The model-based searcher: a k-nearest-neighbour cost model of log time over the candidates'
// features (config axes and, when known, the compile-time resource report), refit from scratch on
// every batch (it is only a sort of distances), proposing by expected improvement. Its first
// batch is the seeded sample, one-wave grids first on a memory-bound shape (launch_facts.hpp).
//
// Why not a library: Debian's libxgboost-dev fits trees well on thousands of points, but this
// model sees 8 to a few hundred, is refit every batch inside the runner and must be bit-for-bit
// deterministic for a resumed job; a neighbour average with a distance-grown uncertainty is
// enough for that and is a hundred lines.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/search/features.hpp"
#include "tuner/search/launch_facts.hpp"
#include "tuner/search/searchers.hpp"

namespace kt::search {
namespace {

constexpr std::size_t kNeighbours = 5;
constexpr std::size_t kInitialRandom = 8;
// Uncertainty grows with the distance (standardised units) to the nearest measured point.
constexpr double kDistanceScale = 0.08;

class ModelSearcher final : public Searcher {
 public:
  explicit ModelSearcher(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "model"; }

  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    const std::size_t n = state.candidates.size();
    if (order_.size() != n) order_ = seeded_order(n, seed_);
    std::size_t succeeded = 0;
    for (const SearchObservation& o : state.observations) succeeded += o.time_us ? 1 : 0;
    if (succeeded < std::min(kInitialRandom, n))
      return first_untaken(one_wave_first(order_, state), state.taken, count);

    const FeatureMatrix& features = features_.of(state.candidates);
    const std::vector<double> y = observed_log_times(state);
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < y.size(); ++i)
      if (state.observations[i].time_us) best = std::min(best, y[i]);

    std::vector<std::pair<double, std::size_t>> scored;  // (-EI, tie-break rank)
    std::vector<std::size_t> rank(n);
    for (std::size_t r = 0; r < n; ++r) rank[order_[r]] = r;
    std::vector<std::pair<double, std::size_t>> near;
    for (std::size_t c = 0; c < n; ++c) {
      if (state.taken[c]) continue;
      near.clear();
      for (std::size_t o = 0; o < state.observations.size(); ++o)
        near.emplace_back(squared_distance(features, c, state.observations[o].candidate), o);
      const std::size_t k = std::min(kNeighbours, near.size());
      std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
      double wsum = 0, mean = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const double w = 1.0 / (std::sqrt(near[j].first) + 1e-3);
        wsum += w;
        mean += w * y[near[j].second];
      }
      mean /= wsum;
      double var = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const double w = 1.0 / (std::sqrt(near[j].first) + 1e-3);
        const double d = y[near[j].second] - mean;
        var += w * d * d;
      }
      var /= wsum;
      const double sigma = std::sqrt(var) + kDistanceScale * std::sqrt(near[0].first) + 1e-6;
      const double z = (best - mean) / sigma;
      const double ei = expected_improvement(z, sigma);
      scored.emplace_back(-ei, rank[c]);
    }
    const std::size_t take = std::min(count, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(take),
                      scored.end());
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < take; ++i) out.push_back(order_[scored[i].second]);
    return out;
  }

 private:
  std::uint64_t seed_;
  std::vector<std::size_t> order_;
  CandidateFeatureCache features_;
};

}  // namespace

std::unique_ptr<Searcher> make_model(std::uint64_t seed) {
  return std::make_unique<ModelSearcher>(seed);
}

}  // namespace kt::search
