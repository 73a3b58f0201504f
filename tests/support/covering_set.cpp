#include "support/covering_set.hpp"

#include <set>
#include <string>
#include <utility>

namespace kt::test {

std::vector<VariantPlan> covering_set(const std::vector<VariantPlan>& plans) {
  std::set<std::pair<std::string, std::int64_t>> seen;
  std::vector<VariantPlan> chosen;
  for (;;) {
    const VariantPlan* best = nullptr;
    std::size_t best_gain = 0;
    for (const VariantPlan& plan : plans) {
      std::size_t gain = 0;
      for (const auto& [name, value] : plan.config) gain += seen.count({name, value}) == 0;
      if (gain > best_gain) {
        best_gain = gain;
        best = &plan;
      }
    }
    if (best == nullptr) return chosen;
    for (const auto& [name, value] : best->config) seen.insert({name, value});
    chosen.push_back(*best);
  }
}

}  // namespace kt::test
