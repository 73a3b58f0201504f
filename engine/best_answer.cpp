#include "engine/best_answer.hpp"

#include "engine/baseline_summary.hpp"
#include "engine/variant_launch.hpp"
#include "engine/warm_start.hpp"
#include "tuner/clock_events.hpp"

namespace kt {
namespace {

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

nlohmann::json stored_timing(const nlohmann::json& entry) {
  return entry.is_object() && entry.contains("timing") ? entry["timing"] : nlohmann::json(nullptr);
}

// The job's baseline in its words ({"kind", "library", "algorithm_index", ...}): the final
// comparison's, else the first GPU's of the first pass; null when it was never timed.
nlohmann::json baseline_description(const JobRecord& job) {
  if (job.final_comparison && job.final_comparison->baseline.is_object())
    return job.final_comparison->baseline;
  const nlohmann::json entry = first_pass_entry(job, std::nullopt);
  if (entry.is_object() && entry.contains("baseline") && entry["baseline"].is_object())
    return entry["baseline"];
  return nullptr;
}

// The baseline's own numbers as a config: integers only, like a variant's config.
Config baseline_config(const nlohmann::json& description) {
  Config config;
  if (!description.is_object()) return config;
  if (description.contains("algorithm_index") && description["algorithm_index"].is_number_integer())
    config["algorithm_index"] = description["algorithm_index"].get<std::int64_t>();
  if (description.contains("fast_accumulation") && description["fast_accumulation"].is_boolean())
    config["fast_accumulation"] = description["fast_accumulation"].get<bool>() ? 1 : 0;
  if (description.contains("algorithm") && description["algorithm"].is_object())
    for (const auto& [name, value] : description["algorithm"].items())
      if (value.is_number_integer()) config[name] = value.get<std::int64_t>();
  return config;
}

// The baseline as a candidate, described by the job (the family's kind when it stored none).
BaselineCandidate baseline_of(const JobRecord& job, const std::string& family_kind) {
  BaselineCandidate baseline;
  baseline.call = baseline_description(job);
  const nlohmann::json& call = baseline.call;
  baseline.kind = call.is_object() && call.contains("kind") && call["kind"].is_string()
                      ? call["kind"].get<std::string>()
                      : family_kind;
  baseline.config = baseline_config(call);
  return baseline;
}

OwnBest own_best(const BestEntry& best) {
  OwnBest own;
  own.variant = best.variant;
  own.final = final_figures(best.job, best.variant.id);
  if (best.variant.timing && best.variant.timing->sm_clock_mhz >= 0)
    own.throttle_reason_names = clock_event_names(best.variant.timing->throttle_reasons);
  return own;
}

BestAnswer answer_for_variant(const BestEntry& best, const std::string& family_kind) {
  const JobRecord& job = best.job;
  const VariantRecord& variant = best.variant;
  BestAnswer answer;
  answer.job = job;
  answer.own = own_best(best);
  answer.baseline = baseline_of(job, family_kind);
  BaselineCandidate& baseline = answer.baseline;

  VerdictInputs inputs;
  inputs.baseline_name = baseline.kind;
  const nlohmann::json first_pass = first_pass_entry(job, variant.gpu_ordinal);
  answer.baseline_failed = job_baseline_failure(job);
  baseline.first_pass_us = stored_median(first_pass);
  if (!baseline.first_pass_us && !answer.baseline_failed) baseline.first_pass_us = job.reference_us;
  if (job.final_comparison && job.final_comparison->baseline_timing) {
    const InterleavedResult& final = *job.final_comparison;
    const TimingSummary* ours = final_timing_of(final, variant.id);
    const auto speedup = speedup_of(final, variant.id);
    if (ours != nullptr && speedup) {
      inputs.ours_us = ours->median_us;
      inputs.final_speedup = speedup;
      inputs.baseline_us = final.baseline_timing->median_us;
      baseline.timing = to_json(*final.baseline_timing);
    }
  }
  if (!inputs.final_speedup) {
    if (variant.timing) inputs.ours_us = variant.timing->median_us;
    inputs.baseline_us = baseline.first_pass_us;
    if (first_pass.is_object() && first_pass.contains("timing"))
      baseline.timing = first_pass["timing"];
  }
  baseline.median_us = inputs.baseline_us;
  answer.verdict = decide_baseline_verdict(inputs);
  if (variant.timing && variant.timing->median_us > 0 && baseline.median_us &&
      *baseline.median_us > 0) {
    const double scale = variant.timing->median_us / *baseline.median_us;
    if (variant.tflops > 0) baseline.tflops = variant.tflops * scale;
    if (variant.gbps > 0) baseline.gbps = variant.gbps * scale;
  }
  return answer;
}

// A problem with no measured variant of ours, whose job timed the baseline.
BestAnswer answer_without_variant(const JobRecord& job, const std::string& family_kind) {
  BestAnswer answer;
  answer.job = job;
  answer.baseline = baseline_of(job, family_kind);
  const nlohmann::json first_pass = first_pass_entry(job, std::nullopt);
  answer.baseline.median_us = answer.baseline.first_pass_us = stored_median(first_pass);
  answer.baseline.timing = stored_timing(first_pass);
  VerdictInputs inputs;
  inputs.baseline_us = answer.baseline.median_us;
  inputs.baseline_name = answer.baseline.kind;
  answer.verdict = decide_baseline_verdict(inputs);
  return answer;
}

// What speedup compares with: the family's baseline, its reference when it names none.
std::string baseline_kind_of(const Family& family) {
  return family.baseline ? family.baseline->kind : family.reference.kind;
}

// The answer of one stored shape; shape: the one the launch is evaluated for (the asked one, also
// when the answer comes from a nearby shape).
std::optional<BestAnswer> stored_answer(Store& store, const ProblemQuery& problem,
                                        const std::string& shape_key,
                                        const AnswerSources& sources) {
  const Family& family = *problem.family;
  const std::string family_kind = baseline_kind_of(family);
  std::optional<BestAnswer> answer;
  if (const auto best = store.best(family.name, problem.dtype, shape_key, problem.device_name)) {
    answer = answer_for_variant(*best, family_kind);
    JobRecord for_shape = best->job;
    for_shape.shape = problem.shape;
    std::string why;
    answer->launch = stored_variant_launch(sources.families, sources.launch_devices, for_shape,
                                           best->variant, &why);
  } else if (const auto job = store.newest_baseline_job(family.name, problem.dtype, shape_key,
                                                        problem.device_name);
             job && stored_median(first_pass_entry(*job, std::nullopt))) {
    // No variant of ours measured: a job that timed the baseline still answers (with it).
    answer = answer_without_variant(*job, family_kind);
  }
  if (!answer) return std::nullopt;
  answer->reference_kind = family.reference.kind;
  answer->baseline_kind = family_kind;
  // An external baseline (PyTorch SDPA) is not timed in-process: speedup fields stay null.
  const BaselineSummary summary = baseline_summary_of(family);
  answer->baseline_description = summary.description;
  answer->baseline_in_process = summary.in_process;
  answer->staleness = staleness_of(answer->job, sources.devices, sources.families);
  return answer;
}

}  // namespace

std::optional<BestAnswer> best_answer(Store& store, const ProblemQuery& problem, bool nearest,
                                      const AnswerSources& sources) {
  if (auto answer = stored_answer(store, problem, problem.shape_key, sources)) return answer;
  if (!nearest) return std::nullopt;
  for (const NearShape& near : nearest_tuned_shapes(store, problem.family->name, problem.dtype,
                                                    problem.shape, problem.device_name, 1)) {
    if (auto answer = stored_answer(store, problem, near.shape_key, sources)) {
      answer->nearest =
          NearestShape{near.shape, near.shape_key, near.distance, problem.shape, problem.shape_key};
      return answer;
    }
  }
  return std::nullopt;
}

}  // namespace kt
