// GET /v1/best's answer (issue 14): our best variant, or the family's baseline when the baseline
// wins (tuner/baseline_verdict.hpp has the rule). When the baseline wins, the top-level fields
// describe the library call ("template" = the baseline's kind, "config" = its numeric choices,
// "median_us" = its time, "variant_id" null) and our best variant stands beside it as
// "best_own"; either way "baseline_wins" and "verdict" ({"answer", "basis", "reason"}) say which
// and why. docs/api.md shows the shape.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "db/model.hpp"

namespace kt {

// best: the problem's best front variant with its job; baseline_job: the newest finished tune job
// of the problem that timed the baseline, consulted when there is no best variant. nullopt when
// neither exists (nothing tuned). family_baseline_kind names the baseline where a job did not
// store its description (jobs from before the baseline was described).
std::optional<nlohmann::json> best_answer_json(const std::optional<BestEntry>& best,
                                               const std::optional<JobRecord>& baseline_job,
                                               const std::string& family_baseline_kind);

// The job's baseline in its words ({"kind", "library", "algorithm_index", ...}): the final
// comparison's, else the first GPU's of the first pass; null when it was never timed.
nlohmann::json baseline_description(const JobRecord& job);

}  // namespace kt
