#include "server/best_answer.hpp"

#include <optional>

#include "server/json_views.hpp"
#include "server/result_keys_view.hpp"

namespace kt {
namespace {

// The fields in which the two candidates, our variant and the baseline, differ; null unless set.
struct CandidateFields {
  nlohmann::json variant_id, template_name, config, config_key;
  nlohmann::json median_us, first_pass_median_us, baseline_median_us;
  nlohmann::json speedup, speedup_low, speedup_high, faster_than_baseline, speedup_vs_reference;
  nlohmann::json tflops, gbps, final, timing, error;
  nlohmann::json registers, spill_bytes, smem_bytes, threads;
  std::optional<nlohmann::json> baseline_call;  // the baseline's description: its body only
};

// One candidate's body: the problem it answers, where the result came from and its figures.
nlohmann::json candidate_json(const JobRecord& job, const CandidateFields& c) {
  nlohmann::json body = {
      {"family", job.family},
      {"dtype", job.dtype},
      {"shape", to_json(job.shape)},
      {"shape_key", job.shape_key},
      {"device", text_or_null(job.device_name)},
      {"device_uuid", text_or_null(job.device_uuid)},
      {"arch", job.arch},
      {"job_id", job.id},
      {"variant_id", c.variant_id},
      {"template", c.template_name},
      {"config", c.config},
      {"config_key", c.config_key},
      {"median_us", c.median_us},
      {"first_pass_median_us", c.first_pass_median_us},
      {"speedup", c.speedup},
      {"speedup_low", c.speedup_low},
      {"speedup_high", c.speedup_high},
      {"faster_than_baseline", c.faster_than_baseline},
      {"baseline_median_us", c.baseline_median_us},
      {"tflops", c.tflops},
      {"gbps", c.gbps},
      {"speedup_vs_reference", c.speedup_vs_reference},
      {"reference_us", optional_number(job.reference_us)},
      {"final", c.final},
      {"timing", c.timing},
      {"error", c.error},
      {"registers", c.registers},
      {"spill_bytes", c.spill_bytes},
      {"smem_bytes", c.smem_bytes},
      {"threads", c.threads},
      {"tuned_at", text_or_null(job.finished_at.empty() ? job.created_at : job.finished_at)},
  };
  if (c.baseline_call) body["baseline_call"] = *c.baseline_call;
  return body;
}

// Our variant: the final comparison's figures when it was in it (the job's result), else the
// first pass's.
CandidateFields own_fields(const OwnBest& own) {
  const VariantRecord& v = own.variant;
  CandidateFields c;
  c.variant_id = v.id;
  c.template_name = v.template_name;
  c.config = to_json(v.config);
  c.config_key = v.config_key;
  c.first_pass_median_us = v.timing ? nlohmann::json(v.timing->median_us) : nlohmann::json(nullptr);
  c.median_us = own.final ? nlohmann::json(own.final->timing.median_us) : c.first_pass_median_us;
  if (own.final && own.final->speedup) {
    c.speedup = own.final->speedup->value;
    c.speedup_low = own.final->speedup->low;
    c.speedup_high = own.final->speedup->high;
    c.faster_than_baseline = own.final->faster_than_baseline.value_or(false);
  }
  if (own.final) c.baseline_median_us = optional_number(own.final->baseline_median_us);
  c.tflops = v.tflops;
  c.gbps = v.gbps;
  c.speedup_vs_reference = optional_number(v.speedup);
  c.final = final_to_json(own.final);
  c.timing = timing_to_json(v.timing, own.throttle_reason_names);
  c.error = v.error ? nlohmann::json(to_json(*v.error)) : nlohmann::json(nullptr);
  c.registers = count_or_null(v.registers);
  c.spill_bytes = count_or_null(v.spill_bytes);
  c.smem_bytes = count_or_null(v.smem_bytes);
  c.threads = v.threads > 0 ? nlohmann::json(v.threads) : nlohmann::json(nullptr);
  return c;
}

// The library call: its kind and numbers, its time; no variant, compile or speedup figures.
CandidateFields baseline_fields(const BaselineCandidate& baseline) {
  CandidateFields c;
  c.template_name = baseline.kind;
  c.config = to_json(baseline.config);
  c.baseline_call = baseline.call;
  c.median_us = optional_number(baseline.median_us);
  c.first_pass_median_us = optional_number(baseline.first_pass_us);
  c.faster_than_baseline = false;
  c.baseline_median_us = optional_number(baseline.median_us);
  c.tflops = optional_number(baseline.tflops);
  c.gbps = optional_number(baseline.gbps);
  c.timing = baseline.timing;
  return c;
}

nlohmann::json nearest_json(const std::optional<NearestShape>& nearest) {
  if (!nearest) return nullptr;
  return {{"shape", to_json(nearest->shape)},
          {"shape_key", nearest->shape_key},
          {"distance", nearest->distance},
          {"asked_shape", to_json(nearest->asked_shape)},
          {"asked_shape_key", nearest->asked_shape_key}};
}

}  // namespace

nlohmann::json best_answer_json(const BestAnswer& answer) {
  const JobRecord& job = answer.job;
  nlohmann::json body =
      candidate_json(job, answer.baseline_is_answer() ? baseline_fields(answer.baseline)
                                                      : own_fields(*answer.own));
  body["baseline_wins"] = answer.verdict.baseline_wins;
  body["baseline_failed"] =
      answer.baseline_failed ? nlohmann::json(*answer.baseline_failed) : nlohmann::json(nullptr);
  body["verdict"] = {{"answer", answer.verdict.baseline_wins ? "baseline" : "ours"},
                     {"basis", answer.verdict.basis},
                     {"reason", answer.verdict.reason}};
  body["best_own"] =
      answer.own ? candidate_json(job, own_fields(*answer.own)) : nlohmann::json(nullptr);
  // How to launch our best variant (the top-level one, or best_own when the baseline wins).
  body["launch"] = answer.launch ? *answer.launch : nlohmann::json(nullptr);
  body["reference"] = answer.reference_kind;
  body["baseline"] = answer.baseline_kind;
  body["baseline_description"] = answer.baseline_description;
  body["baseline_in_process"] = answer.baseline_in_process;
  add_staleness(body, answer.staleness);
  body["exact"] = !answer.nearest;
  body["nearest"] = nearest_json(answer.nearest);
  return body;
}

}  // namespace kt
