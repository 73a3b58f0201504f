#include "tuner/search/warm_start.hpp"

#include <algorithm>
#include <vector>

namespace kt {
namespace {

class SeededFirst final : public Searcher {
 public:
  SeededFirst(std::unique_ptr<Searcher> inner, std::vector<std::size_t> seeds)
      : inner_(std::move(inner)), seeds_(std::move(seeds)) {}
  std::string_view name() const override { return inner_->name(); }

  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    std::vector<std::size_t> batch;
    std::vector<bool> taken = state.taken;
    for (std::size_t seed : seeds_) {
      if (batch.size() >= count) break;
      if (seed >= taken.size() || taken[seed]) continue;
      taken[seed] = true;
      batch.push_back(seed);
    }
    if (batch.size() < count) {
      const SearchState rest{state.candidates, state.observations, taken, state.problem};
      for (std::size_t i : inner_->propose(rest, count - batch.size())) batch.push_back(i);
    }
    return batch;
  }

 private:
  std::unique_ptr<Searcher> inner_;
  std::vector<std::size_t> seeds_;
};

}  // namespace

bool learns_from_measurements(std::string_view searcher_name) {
  return searcher_name == "local" || searcher_name == "model";
}

std::unique_ptr<Searcher> seeded_first(std::unique_ptr<Searcher> inner,
                                       std::vector<std::size_t> seeds) {
  return std::make_unique<SeededFirst>(std::move(inner), std::move(seeds));
}

}  // namespace kt
