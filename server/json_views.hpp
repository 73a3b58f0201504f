// The JSON the API returns for stored records. snake_case names, times in microseconds (*_us),
// unknown numbers as null. docs/api.md shows every shape.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/model.hpp"
#include "engine/baseline_summary.hpp"
#include "engine/final_figures.hpp"
#include "tuner/family.hpp"

namespace kt {

nlohmann::json progress_to_json(const JobProgress& progress);
// A variant; compile_log only when with_log (it can be many kilobytes).
nlohmann::json variant_to_json(const VariantRecord& variant, bool with_log = false);
// A job; progress and best are added when given (best: null while nothing is measured).
nlohmann::json job_to_json(const JobRecord& job, const std::optional<JobProgress>& progress = {},
                           const std::optional<VariantRecord>& best = {}, bool with_best = false);
// A job's pruned configurations: [{template, reason, count, examples: [config...]}].
nlohmann::json pruned_groups_to_json(const std::vector<PrunedGroup>& groups);
// One variant's figures from the job's final comparison (interleaved median, speedup over the
// baseline with its 95% interval, faster_than_baseline = low > 1); null if it was not compared.
nlohmann::json final_to_json(const std::optional<FinalFigures>& final);
// A stored timing with its throttle reasons named; clock and reasons are null without NVML.
nlohmann::json timing_to_json(const std::optional<TimingSummary>& timing,
                              const std::vector<std::string>& throttle_reason_names);
// The small conversions every view shares: "" and the store's -1 ("not known yet") read null.
nlohmann::json text_or_null(const std::string& text);
nlohmann::json count_or_null(int value);
nlohmann::json optional_number(const std::optional<double>& value);
// What speedups are measured against: {"kind", "description", "in_process"}.
nlohmann::json baseline_summary_json(const BaselineSummary& summary);
// GET /v1/families: dims, dtypes, templates with axes and the size of each template's space.
nlohmann::json family_to_json(const Family& family);

}  // namespace kt
