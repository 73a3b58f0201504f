// What a job would be before it runs (POST /v1/jobs?dry_run=1, `kerntune plan`): its space
// planned as the runner plans it (engine/job_plan.hpp), counted per template (feasible
// configs, pruned ones and why, a template for another arch), how many of the feasible the
// budget runs, and a time estimated from this daemon's own compile and measure rates so far.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "engine/job_submission.hpp"
#include "tuner/family.hpp"

namespace kt {

struct TemplatePreview {
  std::string name;
  std::int64_t feasible = 0;  // configs that pass every constraint: what may be compiled
  std::int64_t pruned = 0;
  bool other_arch = false;  // the template targets archs other than the job's
};

struct JobPreview {
  std::vector<TemplatePreview> templates;  // in the family's order
  std::vector<PrunedGroup> pruned;         // per (template, constraint), with examples
  std::int64_t feasible = 0, pruned_total = 0;
  std::int64_t to_run = 0;  // what the budget runs of the feasible (all of them without one)
  // Mean seconds per variant this daemon recorded (NVRTC compiles, worker measurements), and the
  // estimate from them; nullopt before it recorded any.
  std::optional<double> compile_seconds_each, measure_seconds_each;
  int compile_threads = 1;
  std::optional<double> estimated_seconds;
};

// The job as submitted would plan it; nothing is stored. metrics: the scheduler's families
// (kerntune_compile_seconds, kerntune_measure_seconds), whose means set the rates. The estimate is
// to_run compiles spread over compile_threads, plus to_run measurements one after another (an
// upper bound: the pipeline overlaps them); compile-only jobs have no measure term.
JobPreview preview_job(const JobSubmission& submission, const Family& family,
                       const std::vector<prometheus::MetricFamily>& metrics, int compile_threads);

}  // namespace kt
