#include "server/best_answer.hpp"

#include <string>

#include "server/json_views.hpp"
#include "tuner/baseline_verdict.hpp"

namespace kt {
namespace {

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

std::optional<double> stored_median(const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("median_us") || !entry["median_us"].is_number())
    return std::nullopt;
  return entry["median_us"].get<double>();
}

// The first-pass baseline entry ({"median_us", "timing", "baseline"}) of the GPU that measured the
// variant, else the first GPU's; null when the job has none.
nlohmann::json first_pass_entry(const JobRecord& job, std::optional<int> gpu) {
  if (!job.baselines.is_object()) return nullptr;
  if (gpu) {
    const std::string key = std::to_string(*gpu);
    if (job.baselines.contains(key) && stored_median(job.baselines[key])) return job.baselines[key];
  }
  for (const auto& [ordinal, entry] : job.baselines.items())
    if (stored_median(entry)) return entry;
  return nullptr;
}

// The baseline's own numbers as a config ({"algorithm_index": 3, "tile": 24, ...}): integers
// only, like a variant's config; the whole description goes to "baseline_call".
nlohmann::json baseline_config(const nlohmann::json& description) {
  nlohmann::json config = nlohmann::json::object();
  if (!description.is_object()) return config;
  if (description.contains("algorithm_index") && description["algorithm_index"].is_number_integer())
    config["algorithm_index"] = description["algorithm_index"];
  if (description.contains("algorithm") && description["algorithm"].is_object())
    for (const auto& [name, value] : description["algorithm"].items())
      if (value.is_number_integer()) config[name] = value;
  return config;
}

// The baseline's kind as it described itself; the family's when the job never stored one.
std::string baseline_kind(const nlohmann::json& description, const std::string& family_kind) {
  if (description.is_object() && description.contains("kind") && description["kind"].is_string())
    return description["kind"].get<std::string>();
  return family_kind;
}

struct BaselineFigures {
  std::optional<double> median_us;      // what the verdict compared with
  std::optional<double> first_pass_us;  // the first pass's, on the same GPU where known
  nlohmann::json timing;                // of median_us; null when unknown
};

// The answer's body when the baseline is it: the problem, the library call and its time.
nlohmann::json baseline_body(const JobRecord& job, const BaselineFigures& figures,
                             const std::string& family_kind) {
  const nlohmann::json description = baseline_description(job);
  return {
      {"family", job.family},
      {"dtype", job.dtype},
      {"shape", to_json(job.shape)},
      {"shape_key", job.shape_key},
      {"device", text_or_null(job.device_name)},
      {"device_uuid", text_or_null(job.device_uuid)},
      {"arch", job.arch},
      {"job_id", job.id},
      {"variant_id", nullptr},
      {"template", baseline_kind(description, family_kind)},
      {"config", baseline_config(description)},
      {"config_key", nullptr},
      {"baseline_call", description},
      {"median_us", number_or_null(figures.median_us)},
      {"first_pass_median_us", number_or_null(figures.first_pass_us)},
      {"speedup", nullptr},
      {"speedup_low", nullptr},
      {"speedup_high", nullptr},
      {"faster_than_baseline", false},
      {"baseline_median_us", number_or_null(figures.median_us)},
      {"tflops", nullptr},
      {"gbps", nullptr},
      {"speedup_vs_reference", nullptr},
      {"reference_us", number_or_null(job.reference_us)},
      {"final", nullptr},
      {"timing", figures.timing},
      {"error", nullptr},
      {"registers", nullptr},
      {"spill_bytes", nullptr},
      {"smem_bytes", nullptr},
      {"threads", nullptr},
      {"tuned_at", text_or_null(job.finished_at.empty() ? job.created_at : job.finished_at)},
  };
}

nlohmann::json verdict_json(const BaselineVerdict& verdict) {
  return {{"answer", verdict.baseline_wins ? "baseline" : "ours"},
          {"basis", verdict.basis},
          {"reason", verdict.reason}};
}

nlohmann::json answer_for_variant(const BestEntry& best, const std::string& family_kind) {
  const JobRecord& job = best.job;
  const VariantRecord& variant = best.variant;
  nlohmann::json own = best_to_json(best);

  VerdictInputs inputs;
  inputs.baseline_name = baseline_kind(baseline_description(job), family_kind);
  BaselineFigures figures;
  const nlohmann::json first_pass = first_pass_entry(job, variant.gpu_ordinal);
  const std::optional<std::string> baseline_failed = job_baseline_failure(job);
  figures.first_pass_us = stored_median(first_pass);
  if (!figures.first_pass_us && !baseline_failed) figures.first_pass_us = job.reference_us;
  if (job.final_comparison && job.final_comparison->baseline_timing) {
    const InterleavedResult& final = *job.final_comparison;
    const TimingSummary* ours = final_timing_of(final, variant.id);
    const auto speedup = speedup_of(final, variant.id);
    if (ours != nullptr && speedup) {
      inputs.ours_us = ours->median_us;
      inputs.final_speedup = speedup;
      inputs.baseline_us = final.baseline_timing->median_us;
      figures.timing = to_json(*final.baseline_timing);
    }
  }
  if (!inputs.final_speedup) {
    if (variant.timing) inputs.ours_us = variant.timing->median_us;
    inputs.baseline_us = figures.first_pass_us;
    if (first_pass.is_object() && first_pass.contains("timing"))
      figures.timing = first_pass["timing"];
  }
  figures.median_us = inputs.baseline_us;
  const BaselineVerdict verdict = decide_baseline_verdict(inputs);

  nlohmann::json body;
  if (verdict.baseline_wins) {
    body = baseline_body(job, figures, family_kind);
    // Same problem, same flops and bytes: the baseline's rates follow from ours.
    if (variant.timing && variant.timing->median_us > 0 && figures.median_us &&
        *figures.median_us > 0) {
      const double scale = variant.timing->median_us / *figures.median_us;
      if (variant.tflops > 0) body["tflops"] = variant.tflops * scale;
      if (variant.gbps > 0) body["gbps"] = variant.gbps * scale;
    }
  } else {
    body = own;
  }
  body["baseline_wins"] = verdict.baseline_wins;
  body["baseline_failed"] =
      baseline_failed ? nlohmann::json(*baseline_failed) : nlohmann::json(nullptr);
  body["verdict"] = verdict_json(verdict);
  body["best_own"] = std::move(own);
  return body;
}

// A problem with no measured variant of ours, whose job timed the baseline.
nlohmann::json answer_without_variant(const JobRecord& job, const std::string& family_kind) {
  BaselineFigures figures;
  const nlohmann::json first_pass = first_pass_entry(job, std::nullopt);
  figures.median_us = figures.first_pass_us = stored_median(first_pass);
  if (first_pass.is_object() && first_pass.contains("timing"))
    figures.timing = first_pass["timing"];
  VerdictInputs inputs;
  inputs.baseline_us = figures.median_us;
  inputs.baseline_name = baseline_kind(baseline_description(job), family_kind);
  const BaselineVerdict verdict = decide_baseline_verdict(inputs);
  nlohmann::json body = baseline_body(job, figures, family_kind);
  body["baseline_wins"] = verdict.baseline_wins;
  body["baseline_failed"] = nullptr;
  body["verdict"] = verdict_json(verdict);
  body["best_own"] = nullptr;
  return body;
}

}  // namespace

nlohmann::json baseline_description(const JobRecord& job) {
  if (job.final_comparison && job.final_comparison->baseline.is_object())
    return job.final_comparison->baseline;
  const nlohmann::json entry = first_pass_entry(job, std::nullopt);
  if (entry.is_object() && entry.contains("baseline") && entry["baseline"].is_object())
    return entry["baseline"];
  return nullptr;
}

std::optional<nlohmann::json> best_answer_json(const std::optional<BestEntry>& best,
                                               const std::optional<JobRecord>& baseline_job,
                                               const std::string& family_baseline_kind) {
  if (best) return answer_for_variant(*best, family_baseline_kind);
  if (baseline_job && stored_median(first_pass_entry(*baseline_job, std::nullopt)))
    return answer_without_variant(*baseline_job, family_baseline_kind);
  return std::nullopt;
}

}  // namespace kt
