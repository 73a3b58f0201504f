#include "tuner/search/searcher.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tuner/search/searchers.hpp"

namespace kt {

std::vector<std::size_t> seeded_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = n; i > 1; --i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
    const std::size_t j = static_cast<std::size_t>((state >> 33) % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

namespace search {

bool one_axis_apart(const SearchCandidate& a, const SearchCandidate& b) {
  if (a.template_name != b.template_name || a.config.size() != b.config.size()) return false;
  int differing = 0;
  for (auto ia = a.config.begin(), ib = b.config.begin(); ia != a.config.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return false;
    if (ia->second != ib->second && ++differing > 1) return false;
  }
  return differing == 1;
}

double expected_improvement(double z, double sigma) {
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return sigma * (z * cdf + pdf);
}

std::vector<std::size_t> first_untaken(const std::vector<std::size_t>& order,
                                       const std::vector<bool>& taken, std::size_t count) {
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    if (out.size() >= count) break;
    if (!taken[i]) out.push_back(i);
  }
  return out;
}

std::vector<double> observed_log_times(const SearchState& state) {
  double worst = 0;
  bool any = false;
  for (const SearchObservation& o : state.observations)
    if (o.time_us && *o.time_us > 0) {
      worst = any ? std::max(worst, std::log(*o.time_us)) : std::log(*o.time_us);
      any = true;
    }
  const double penalty = any ? worst + std::log(1.5) : 0.0;
  std::vector<double> out;
  out.reserve(state.observations.size());
  for (const SearchObservation& o : state.observations)
    out.push_back(o.time_us && *o.time_us > 0 ? std::log(*o.time_us) : penalty);
  return out;
}

namespace {

// The space in the order it was enumerated: what a whole-space job always did.
class ExhaustiveSearcher final : public Searcher {
 public:
  std::string_view name() const override { return "exhaustive"; }
  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    std::vector<std::size_t> order(state.candidates.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    return first_untaken(order, state.taken, count);
  }
};

// A seeded shuffle, ignoring what was measured: the yardstick every learner is compared with.
class RandomSearcher final : public Searcher {
 public:
  explicit RandomSearcher(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    if (order_.size() != state.candidates.size())
      order_ = seeded_order(state.candidates.size(), seed_);
    return first_untaken(order_, state.taken, count);
  }

 private:
  std::uint64_t seed_;
  std::vector<std::size_t> order_;
};

}  // namespace

std::unique_ptr<Searcher> make_exhaustive() {
  return std::make_unique<ExhaustiveSearcher>();
}
std::unique_ptr<Searcher> make_random(std::uint64_t seed) {
  return std::make_unique<RandomSearcher>(seed);
}

}  // namespace search

const std::vector<std::string>& searcher_names() {
  static const std::vector<std::string> names{"exhaustive", "random", "model", "local",
                                              "predicted"};
  return names;
}

std::unique_ptr<Searcher> make_searcher(std::string_view name, std::uint64_t seed) {
  if (name == "exhaustive") return search::make_exhaustive();
  if (name == "random") return search::make_random(seed);
  if (name == "model") return search::make_model(seed);
  if (name == "local") return search::make_local(seed);
  if (name == "predicted") return search::make_predicted(seed);
  return nullptr;
}

}  // namespace kt
