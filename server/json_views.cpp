#include "server/json_views.hpp"

#include "engine/family_summary.hpp"
#include "tuner/clock_events.hpp"

namespace kt {
namespace {

// The archs a template's GPU tests ran on (the manifest's "validated_on", as written): empty for
// a template written for a GPU we have none of.
nlohmann::json validated_on(const Family& family, const std::string& name) {
  const auto templates = family.manifest.find("templates");
  if (templates == family.manifest.end() || !templates->is_array()) return nlohmann::json::array();
  for (const auto& t : *templates)
    if (t.is_object() && t.value("name", "") == name && t.contains("validated_on"))
      return nlohmann::json(t["validated_on"]);
  return nlohmann::json::array();
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(to_json(*value)) : nlohmann::json(nullptr);
}

nlohmann::json timing_view(const std::optional<TimingSummary>& timing) {
  if (!timing || timing->sm_clock_mhz < 0) return timing_to_json(timing, {});
  return timing_to_json(timing, clock_event_names(timing->throttle_reasons));
}

// The configs a pinned job measures ([{"template", "config"}, ...]); null for the whole space.
nlohmann::json pinned_configs_view(const std::string& text) {
  if (text.empty()) return nullptr;
  nlohmann::json configs = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return configs.is_discarded() ? nlohmann::json(text) : configs;
}

nlohmann::json baseline_wins_view(const JobRecord& job) {
  const std::optional<bool> wins = final_baseline_wins(job);
  return wins ? nlohmann::json(*wins) : nlohmann::json(nullptr);
}

// The interleaved re-measure of the job's top candidates; null until the job stored one.
nlohmann::json comparison_view(const JobRecord& job) {
  if (!job.winner_variant_id) return nullptr;
  auto id_or_null = [](const std::optional<std::int64_t>& id) {
    return id ? nlohmann::json(*id) : nlohmann::json(nullptr);
  };
  return {
      {"winner_variant_id", *job.winner_variant_id},
      {"runner_up_variant_id", id_or_null(job.runner_up_variant_id)},
      {"distinguishable", job.winner_distinguishable ? nlohmann::json(*job.winner_distinguishable)
                                                     : nlohmann::json(nullptr)},
      {"margin", optional_number(job.winner_margin)},
      {"winner_median_us", optional_number(job.winner_median_us)},
      {"runner_up_median_us", optional_number(job.runner_up_median_us)},
      {"final", job.final_comparison ? to_json(*job.final_comparison) : nlohmann::json(nullptr)},
      {"baseline_wins", baseline_wins_view(job)}};
}

}  // namespace

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

nlohmann::json count_or_null(int value) {
  return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json timing_to_json(const std::optional<TimingSummary>& timing,
                              const std::vector<std::string>& throttle_reason_names) {
  if (!timing) return nullptr;
  nlohmann::json j = to_json(*timing);
  if (timing->sm_clock_mhz < 0) {
    j["sm_clock_mhz"] = nullptr;
    j["throttle_reasons"] = nullptr;
    j["throttle_reason_names"] = nullptr;
  } else {
    j["throttle_reason_names"] = throttle_reason_names;
  }
  return j;
}

nlohmann::json final_to_json(const std::optional<FinalFigures>& final) {
  if (!final) return nullptr;
  nlohmann::json view = {{"median_us", final->timing.median_us},
                         {"timing", to_json(final->timing)},
                         {"winner", final->winner},
                         {"baseline", final->baseline}};
  if (final->baseline_median_us) view["baseline_median_us"] = *final->baseline_median_us;
  if (final->speedup) {
    view["speedup"] = final->speedup->value;
    view["speedup_low"] = final->speedup->low;
    view["speedup_high"] = final->speedup->high;
    view["faster_than_baseline"] = final->faster_than_baseline.value_or(false);
  }
  return view;
}

nlohmann::json progress_to_json(const JobProgress& progress) {
  nlohmann::json by_status = nlohmann::json::object();
  for (const auto& [status, count] : progress.by_status) by_status[status] = count;
  return {{"total", progress.total}, {"finished", progress.finished}, {"by_status", by_status}};
}

nlohmann::json variant_to_json(const VariantRecord& v, bool with_log) {
  nlohmann::json j = {
      {"id", v.id},
      {"job_id", v.job_id},
      {"template", v.template_name},
      {"config", to_json(v.config)},
      {"config_key", v.config_key},
      {"status", std::string(to_string(v.status))},
      {"failed_gate", text_or_null(v.failed_gate)},
      {"reason", text_or_null(v.reason)},
      {"has_kernel", !v.kernel_key.empty()},
      {"kernel_key", text_or_null(v.kernel_key)},
      {"registers", count_or_null(v.registers)},
      {"spill_bytes", count_or_null(v.spill_bytes)},
      {"smem_bytes", count_or_null(v.smem_bytes)},
      {"threads", v.threads > 0 ? nlohmann::json(v.threads) : nlohmann::json(nullptr)},
      {"compile_ms", v.compile_ms},
      {"gpu_ordinal", v.gpu_ordinal ? nlohmann::json(*v.gpu_ordinal) : nlohmann::json(nullptr)},
      {"measure_ms", v.gpu_ordinal ? nlohmann::json(v.measure_ms) : nlohmann::json(nullptr)},
      {"median_us", v.timing ? nlohmann::json(v.timing->median_us) : nlohmann::json(nullptr)},
      {"timing", timing_view(v.timing)},
      {"error", optional_json(v.error)},
      {"tflops", v.timing ? nlohmann::json(v.tflops) : nlohmann::json(nullptr)},
      {"gbps", v.timing ? nlohmann::json(v.gbps) : nlohmann::json(nullptr)},
      {"speedup", optional_number(v.speedup)},
  };
  if (with_log) j["compile_log"] = v.compile_log;
  return j;
}

nlohmann::json job_to_json(const JobRecord& job, const std::optional<JobProgress>& progress,
                           const std::optional<VariantRecord>& best, bool with_best) {
  nlohmann::json j = {
      {"id", job.id},
      {"family", job.family},
      {"shape", to_json(job.shape)},
      {"shape_key", job.shape_key},
      {"dtype", job.dtype},
      {"mode", std::string(to_string(job.mode))},
      {"arch", job.arch},
      {"device_uuid", text_or_null(job.device_uuid)},
      {"device_name", text_or_null(job.device_name)},
      {"budget", job.budget},
      {"status", std::string(to_string(job.status))},
      {"reason", text_or_null(job.reason)},
      {"cancel_requested", job.cancel_requested},
      {"reference_us", optional_number(job.reference_us)},
      {"created_at", text_or_null(job.created_at)},
      {"started_at", text_or_null(job.started_at)},
      {"finished_at", text_or_null(job.finished_at)},
  };
  j["comparison"] = comparison_view(job);
  j["baselines"] = job.baselines;
  const std::optional<std::string> baseline_failed = job_baseline_failure(job);
  j["baseline_failed"] =
      baseline_failed ? nlohmann::json(*baseline_failed) : nlohmann::json(nullptr);
  j["pipeline"] = std::string(to_string(job.pipeline));
  j["gpus"] = job.gpus;
  j["configs"] = pinned_configs_view(job.pinned_configs_json);
  j["search"] = {{"name", text_or_null(job.search)},
                 {"seconds", job.search_seconds > 0 ? nlohmann::json(job.search_seconds)
                                                    : nlohmann::json(nullptr)},
                 {"patience", job.search_patience > 0 ? nlohmann::json(job.search_patience)
                                                      : nlohmann::json(nullptr)}};
  if (progress) j["progress"] = progress_to_json(*progress);
  if (with_best) j["best"] = best ? variant_to_json(*best) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json pruned_groups_to_json(const std::vector<PrunedGroup>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const PrunedGroup& group : groups) {
    nlohmann::json examples = nlohmann::json::array();
    for (const Config& config : group.examples) examples.push_back(to_json(config));
    out.push_back({{"template", group.template_name},
                   {"reason", group.reason},
                   {"count", group.count},
                   {"examples", examples}});
  }
  return out;
}

nlohmann::json baseline_summary_json(const BaselineSummary& summary) {
  return {{"kind", summary.kind},
          {"description", summary.description},
          {"in_process", summary.in_process}};
}

nlohmann::json family_to_json(const Family& family) {
  nlohmann::json dims = nlohmann::json::array();
  for (const DimSpec& dim : family.dims) {
    dims.push_back(
        {{"name", dim.name}, {"min", dim.min}, {"max", dim.max}, {"description", dim.description}});
    if (dim.default_value) dims.back()["default"] = *dim.default_value;
  }
  const FamilySummary summary = family_summary_of(family);
  nlohmann::json templates = nlohmann::json::array();
  for (std::size_t i = 0; i < family.templates.size(); ++i) {
    const TemplateSpec& tmpl = family.templates[i];
    nlohmann::json axes = nlohmann::json::array();
    for (const AxisSpec& axis : tmpl.axes)
      axes.push_back({{"name", axis.name},
                      {"values", axis.values},
                      {"archs", axis.archs},
                      {"description", axis.description}});
    templates.push_back({{"name", tmpl.name},
                         {"kernel", tmpl.kernel},
                         {"archs", tmpl.archs},
                         {"validated_on", validated_on(family, tmpl.name)},
                         {"axes", axes},
                         {"constraints", tmpl.constraints},
                         {"space_size", summary.space_sizes[i]}});
  }
  // What a correct output is, per dtype: the manifest's {"atol", "rtol", "rel_l2"}.
  nlohmann::json tolerance = nlohmann::json::object();
  for (const auto& [dtype, t] : family.tolerance) tolerance[dtype] = to_json(t);
  return {{"name", family.name},
          {"description", family.description},
          {"dims", dims},
          {"dtypes", family.dtypes},
          {"reference", family.reference.kind},
          {"tolerance", tolerance},
          {"baseline", baseline_summary_json(summary.baseline)},
          {"templates", templates},
          // Registered over the API or shipped; the version results are keyed to (family_hash).
          {"origin", family.registered ? "registered" : "shipped"},
          {"source_hash", family.source_hash}};
}

}  // namespace kt
