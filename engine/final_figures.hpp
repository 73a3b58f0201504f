// One variant's figures from its job's final comparison (the top candidates and the baseline
// re-measured interleaved): its interleaved timing and its speedup over the baseline with the 95%
// interval. The job view and GET /v1/best show them; the server only renders them.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "db/model.hpp"

namespace kt {

struct FinalFigures {
  TimingSummary timing;                      // the variant's interleaved timing
  bool winner = false;                       // the comparison's winner
  nlohmann::json baseline;                   // what the baseline was; null without one
  std::optional<double> baseline_median_us;  // from the same rounds
  std::optional<Speedup> speedup;            // baseline / ours; nullopt without a baseline
  // "Faster than the baseline" only when the interval's low end is above 1 (the rule of
  // tuner/baseline_verdict.hpp); nullopt without a speedup.
  std::optional<bool> faster_than_baseline;
};

// nullopt when the job has no final comparison or the variant was not in it.
std::optional<FinalFigures> final_figures(const JobRecord& job, std::int64_t variant_id);

// Whether the baseline beat the job's winner in its final comparison (the winner counts only when
// shown faster); nullopt without a comparison against the baseline.
std::optional<bool> final_baseline_wins(const JobRecord& job);

}  // namespace kt
