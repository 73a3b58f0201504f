#include "engine/baseline_summary.hpp"

#include "tuner/family_baseline.hpp"

namespace kt {

BaselineSummary baseline_summary_of(const Family& family) {
  const nlohmann::json summary = baseline_summary(family);
  return {summary.at("kind").get<std::string>(), summary.at("description").get<std::string>(),
          summary.at("in_process").get<bool>()};
}

}  // namespace kt
