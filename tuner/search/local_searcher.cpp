// The local (evolutionary) searcher: after a seeded random first batch, mutate the best configs
// measured so far along one axis at a time (same template, every other axis equal), the fastest
// parent's untried neighbours first; when the best few have no untried neighbour left, the next
// parents; when none has, random restarts. On a memory-bound shape the candidates whose grid fills
// one wave (tuner/search/launch_facts.hpp) come first wherever the searcher draws in seeded order:
// the first batch, a parent's neighbours and the random slots (all three helped on the recorded
// memory-bound spaces: bench/results/2026-11-27-one-wave-search/). On every other shape the
// proposals are exactly those of the plain seeded order.
#include <algorithm>
#include <map>

#include "tuner/search/launch_facts.hpp"
#include "tuner/search/searchers.hpp"

namespace kt::search {
namespace {

constexpr std::size_t kInitialRandom = 8;
constexpr std::size_t kExploreEvery = 4;

class LocalSearcher final : public Searcher {
 public:
  explicit LocalSearcher(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "local"; }

  std::vector<std::size_t> propose(const SearchState& state, std::size_t count) override {
    const std::size_t n = state.candidates.size();
    if (order_.size() != n) {
      order_ = seeded_order(n, seed_);
      rank_.assign(n, 0);
      for (std::size_t r = 0; r < n; ++r) rank_[order_[r]] = r;
      neighbours_.clear();
    }
    std::vector<std::pair<double, std::size_t>> parents;  // (time, candidate)
    for (const SearchObservation& o : state.observations)
      if (o.time_us) parents.emplace_back(*o.time_us, o.candidate);
    // The seeded order, one-wave grids first on a memory-bound shape (else order_ itself).
    const std::vector<std::size_t> order = one_wave_first(order_, state);
    if (parents.size() < std::min(kInitialRandom, n))
      return first_untaken(order, state.taken, count);
    std::sort(parents.begin(), parents.end());

    std::vector<bool> picked(n, false);
    std::vector<std::size_t> out;
    // Every kExploreEvery-th slot of a batch goes to a random config: a local search that only
    // climbs stays in the basin its first batch happened to land in.
    const std::size_t explore = kExploreEvery > 0 ? count / kExploreEvery : 0;
    const std::size_t exploit = count - explore;
    for (const auto& [time, parent] : parents) {
      if (out.size() >= exploit) break;
      for (std::size_t c : deeper_rings_first(
               one_wave_first(neighbours_of(state.candidates, parent), state), state)) {
        if (out.size() >= exploit) break;
        if (state.taken[c] || picked[c]) continue;
        picked[c] = true;
        out.push_back(c);
      }
    }
    for (std::size_t c : order) {  // every measured config's neighbourhood is exhausted
      if (out.size() >= count) break;
      if (!state.taken[c] && !picked[c]) out.push_back(c);
    }
    return out;
  }

 private:
  // A parent's one-axis neighbours, in the seeded order (computed once per parent).
  const std::vector<std::size_t>& neighbours_of(const std::vector<SearchCandidate>& candidates,
                                                std::size_t parent) {
    auto found = neighbours_.find(parent);
    if (found != neighbours_.end()) return found->second;
    std::vector<std::size_t> list;
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (one_axis_apart(candidates[parent], candidates[c])) list.push_back(c);
    std::sort(list.begin(), list.end(),
              [&](std::size_t a, std::size_t b) { return rank_[a] < rank_[b]; });
    return neighbours_.emplace(parent, std::move(list)).first->second;
  }

  std::uint64_t seed_;
  std::vector<std::size_t> order_;
  std::vector<std::size_t> rank_;
  std::map<std::size_t, std::vector<std::size_t>> neighbours_;
};

}  // namespace

std::unique_ptr<Searcher> make_local(std::uint64_t seed) {
  return std::make_unique<LocalSearcher>(seed);
}

}  // namespace kt::search
