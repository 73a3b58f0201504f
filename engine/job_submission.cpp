#include "engine/job_submission.hpp"

#include <algorithm>

#include "engine/result_keys.hpp"
#include "engine/warm_start.hpp"
#include "tuner/client_values.hpp"
#include "tuner/nearest_name.hpp"
#include "tuner/pinned_configs.hpp"
#include "tuner/search/searcher.hpp"
#include "tuner/search/warm_start.hpp"

namespace kt {
namespace {

[[noreturn]] void refuse(SubmissionProblem problem, const std::string& message) {
  throw SubmissionError(problem, message);
}

// The job's arch and GPU, checked against this host's devices.
JobTarget target_of(const JobRequest& request, const SubmissionHost& host) {
  try {
    return resolve_target({request.mode, request.arch, request.device, ""}, host.devices);
  } catch (const TargetError& error) {
    switch (error.problem()) {
      case TargetProblem::no_device: {
        const std::string why = host.device_error.empty() ? "no device found" : host.device_error;
        refuse(SubmissionProblem::no_device,
               "no GPU on this host (" + why +
                   "); use \"mode\":\"compile\" with \"arch\" to compile only");
      }
      case TargetProblem::unknown_device:
        refuse(SubmissionProblem::unknown_device, error.what());
      case TargetProblem::arch_mismatch:
        refuse(SubmissionProblem::arch_mismatch, error.what());
      case TargetProblem::unknown_arch:
        break;
    }
    refuse(SubmissionProblem::unknown_arch, error.what());
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// A job for an arch none of the family's templates targets would plan only unsupported_arch rows
// and end "done" with nothing run: refused, naming the archs the family does target.
void require_family_arch(const Family& family, const std::string& arch) {
  std::vector<std::string> targeted;
  for (const TemplateSpec& tmpl : family.templates) {
    if (tmpl.archs.empty()) return;  // a template written for every arch
    for (const std::string& name : tmpl.archs) {
      if (name == arch) return;
      if (std::find(targeted.begin(), targeted.end(), name) == targeted.end())
        targeted.push_back(name);
    }
  }
  std::string message = "family " + family.name + " has no template for " + arch +
                        "; its templates target: " + joined(targeted);
  if (std::find(targeted.begin(), targeted.end(), arch + "a") != targeted.end())
    message += " (did you mean " + arch + "a?)";
  refuse(SubmissionProblem::unsupported_arch, message);
}

// "configs": measure only these points of the space (checked against the job's target).
std::string pinned_configs_of(const JobRequest& request, const Family& family, const NewJob& job,
                              const DeviceLimits& limits) {
  // A check answers for the configs it was given: over a whole space it would be a tune job whose
  // results count for nothing.
  if (job.mode == JobMode::check && (request.configs.is_null() || request.configs.empty()))
    refuse(SubmissionProblem::invalid_configs,
           "mode \"check\" checks the configs it is given on a GPU: give \"configs\" (or use "
           "\"mode\":\"tune\")");
  if (request.configs.is_null()) return "";
  try {
    return pinned_configs_to_text(
        validate_pinned_configs(request.configs, family, job.shape, job.dtype, limits));
  } catch (const PinnedConfigError& error) {
    refuse(SubmissionProblem::invalid_configs, error.what());
  }
}

// The searcher and its stop conditions. Unnamed: the default searcher for a budgeted tuning job,
// the whole space in order without a budget; pinned configs, compile-only and serial jobs run
// their plan as it is (only "exhaustive" or "random" apply to them).
void search_of(const JobRequest& request, NewJob& job) {
  const bool plan_as_is = !job.pinned_configs_json.empty() || job.mode == JobMode::compile ||
                          job.pipeline == Pipeline::serial;
  const std::string fallback =
      plan_as_is || job.budget == 0 ? "exhaustive" : std::string(kDefaultSearcher);
  job.search = request.search.value_or(fallback);
  if (!make_searcher(job.search, 1))
    refuse(SubmissionProblem::invalid_search, "unknown search " + quote_client_text(job.search) +
                                                  did_you_mean(job.search, searcher_names()) +
                                                  "; expected one of " + joined(searcher_names()));
  if (plan_as_is && job.search != "exhaustive" && job.search != "random")
    refuse(SubmissionProblem::invalid_search,
           "search " + quote_client_text(job.search) +
               " needs a pipelined tuning job over the family's space (not pinned configs, "
               "compile-only or serial)");
  if (plan_as_is && job.search == "exhaustive" && job.budget > 0) job.search = "random";
  job.search_seconds = request.search_seconds;
  job.search_patience = request.search_patience;
  if (plan_as_is && (job.search_seconds > 0 || job.search_patience > 0))
    refuse(SubmissionProblem::invalid_search,
           "search_seconds and search_patience apply to pipelined tuning jobs over the family's "
           "space");
}

}  // namespace

JobSubmission plan_job(const JobRequest& request, const SubmissionHost& host) {
  NewJob job;
  job.family = request.family;
  job.dtype = request.dtype;
  job.shape = request.shape;
  job.mode = request.mode;
  job.budget = request.budget;
  job.pipeline = request.pipeline;
  JobTarget target = target_of(request, host);
  require_family_arch(host.family, target.arch);
  job.arch = target.arch;
  if (target.device) {
    job.device_uuid = target.device->uuid;
    job.device_name = target.device->name;
  }
  // What the result will be keyed to (engine/result_keys.hpp).
  const ResultKeys keys = current_keys(job.device_name, host.devices, &host.family);
  if (target.device) job.driver_version = target.device->driver_version;
  job.nvrtc_version = keys.nvrtc_version;
  job.family_hash = keys.family_hash;
  job.pinned_configs_json = pinned_configs_of(request, host.family, job, target.limits);
  search_of(request, job);
  return {std::move(job), std::move(target), request.warm_start};
}

JobRecord submit_job(JobSubmission submission, Store& store, JobScheduler& scheduler) {
  NewJob& job = submission.job;
  // The predicted searcher uses it only when there is no predictor for the family yet.
  if (submission.warm_start && job.mode == JobMode::tune && job.pinned_configs_json.empty() &&
      (learns_from_measurements(job.search) || job.search == "predicted"))
    if (const auto warm = find_warm_start(store, job.family, job.dtype, job.shape, job.device_name))
      job.warm_start_json = to_json(*warm).dump();
  const std::int64_t id = store.create_job(job);
  const auto stored = store.job(id);
  if (!stored) throw std::runtime_error("job " + std::to_string(id) + " vanished after insert");
  scheduler.enqueue(*stored, std::move(submission.target));
  return *stored;
}

TuneOnRequest tune_on_request(const ProblemQuery& problem, const std::string& device_model,
                              Store& store, JobScheduler& scheduler, const SubmissionHost& host) {
  if (auto job = unfinished_tune_job(store, problem)) return {std::move(*job), false};
  JobRequest request;
  request.family = problem.family->name;
  request.dtype = problem.dtype;
  request.shape = problem.shape;
  request.device = device_model;
  return {submit_job(plan_job(request, host), store, scheduler), true};
}

}  // namespace kt
