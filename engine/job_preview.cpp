#include "engine/job_preview.hpp"

#include <algorithm>

#include "engine/job_plan.hpp"

namespace kt {
namespace {

std::optional<double> mean_of(const std::vector<prometheus::MetricFamily>& metrics,
                              const std::string& name) {
  for (const prometheus::MetricFamily& family : metrics) {
    if (family.name != name) continue;
    std::uint64_t count = 0;
    double sum = 0;
    for (const prometheus::ClientMetric& metric : family.metric) {
      count += metric.histogram.sample_count;
      sum += metric.histogram.sample_sum;
    }
    if (count > 0) return sum / static_cast<double>(count);
  }
  return std::nullopt;
}

}  // namespace

JobPreview preview_job(const JobSubmission& submission, const Family& family,
                       const std::vector<prometheus::MetricFamily>& metrics, int compile_threads) {
  const NewJob& asked = submission.job;
  JobRecord job;
  job.family = asked.family;
  job.shape = asked.shape;
  job.shape_key = canonical_key(asked.shape);
  job.dtype = asked.dtype;
  job.mode = asked.mode;
  job.arch = asked.arch;
  job.device_name = asked.device_name;
  job.budget = asked.budget;
  job.pipeline = asked.pipeline;
  job.pinned_configs_json = asked.pinned_configs_json;
  job.search = asked.search;
  // The whole space: the budget's share is counted here, not sampled.
  const JobPlan plan = plan_job(family, job, submission.target.limits, true);
  JobPreview preview;
  for (const TemplateSpec& kernel : family.templates) {
    TemplatePreview entry;
    entry.name = kernel.name;
    preview.templates.push_back(entry);
  }
  auto entry_of = [&](const std::string& name) -> TemplatePreview& {
    for (TemplatePreview& entry : preview.templates)
      if (entry.name == name) return entry;
    preview.templates.push_back({name});
    return preview.templates.back();
  };
  for (const VariantRecord& row : plan.rows) {
    if (row.status == VariantStatus::unsupported_arch) {
      entry_of(row.template_name).other_arch = true;
      continue;
    }
    ++entry_of(row.template_name).feasible;
    ++preview.feasible;
  }
  for (const PrunedGroup& group : plan.pruned) {
    entry_of(group.template_name).pruned += group.count;
    preview.pruned_total += group.count;
  }
  preview.pruned = plan.pruned;
  preview.to_run = job.budget > 0 ? std::min(job.budget, preview.feasible) : preview.feasible;
  preview.compile_threads = std::max(1, compile_threads);
  preview.compile_seconds_each = mean_of(metrics, "kerntune_compile_seconds");
  preview.measure_seconds_each = mean_of(metrics, "kerntune_measure_seconds");
  const bool measures = job.mode != JobMode::compile;
  if (preview.compile_seconds_each && (!measures || preview.measure_seconds_each))
    preview.estimated_seconds = static_cast<double>(preview.to_run) *
                                (*preview.compile_seconds_each / preview.compile_threads +
                                 (measures ? *preview.measure_seconds_each : 0.0));
  return preview;
}

}  // namespace kt
