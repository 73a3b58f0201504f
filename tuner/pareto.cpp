#include "tuner/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace kt {
namespace {

// A NaN objective would make every comparison false (never dominated, never dominating); ranking
// it as +infinity instead puts an unmeasurable point behind every real one.
double rank(double objective) {
  return std::isnan(objective) ? std::numeric_limits<double>::infinity() : objective;
}

auto objectives(const ParetoPoint& p) {
  return std::make_tuple(rank(p.median_us), rank(p.max_error), rank(p.footprint));
}

}  // namespace

bool dominates(const ParetoPoint& a, const ParetoPoint& b) {
  const auto [a_time, a_error, a_footprint] = objectives(a);
  const auto [b_time, b_error, b_footprint] = objectives(b);
  const bool no_worse = a_time <= b_time && a_error <= b_error && a_footprint <= b_footprint;
  const bool better = a_time < b_time || a_error < b_error || a_footprint < b_footprint;
  return no_worse && better;
}

std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points) {
  // In lexicographic order of the objectives a dominator always comes before what it dominates,
  // and domination is transitive, so each point only needs checking against the front so far.
  std::stable_sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return objectives(a) < objectives(b);
  });
  std::vector<ParetoPoint> front;
  for (const ParetoPoint& candidate : points) {
    const bool dominated = std::any_of(front.begin(), front.end(), [&](const ParetoPoint& kept) {
      return dominates(kept, candidate);
    });
    if (!dominated) front.push_back(candidate);
  }
  std::stable_sort(front.begin(), front.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return std::make_tuple(rank(a.median_us), a.variant_id) <
           std::make_tuple(rank(b.median_us), b.variant_id);
  });
  return front;
}

}  // namespace kt
