#include "engine/predicted_checks.hpp"

#include <nlohmann/json.hpp>

#include "tuner/config.hpp"

namespace kt {
namespace {

std::string check_key(const ProblemQuery& problem, const std::string& arch,
                      const std::string& template_name, const Config& config) {
  return problem.family->name + "|" + problem.family->source_hash + "|" + problem.dtype + "|" +
         arch + "|" + problem.shape_key + "|" + template_name + "|" + canonical_key(config);
}

}  // namespace

PredictedChecks::PredictedChecks(Store& store, JobScheduler& scheduler, std::size_t max_open,
                                 std::size_t max_known)
    : store_(store), scheduler_(scheduler), max_open_(max_open), max_known_(max_known) {}

PredictedCheck PredictedChecks::state_of(std::int64_t job_id) {
  PredictedCheck check;
  check.job_id = job_id;
  const std::optional<JobRecord> job = store_.job(job_id);
  if (!job) {
    check.status = "failed";
    check.reason = "its compile job is gone from the store";
    return check;
  }
  switch (job->status) {
    case JobStatus::queued:
      check.status = "queued";
      return check;
    case JobStatus::running:
      check.status = "running";
      return check;
    case JobStatus::failed:
    case JobStatus::cancelled:
      check.status = "failed";
      check.reason = "its compile job " + std::string(to_string(job->status)) +
                     (job->reason.empty() ? "" : ": " + job->reason);
      return check;
    case JobStatus::done:
      break;
  }
  const std::vector<VariantRecord> variants = store_.variants(job_id);
  if (variants.empty()) {
    check.status = "failed";
    check.reason = "its compile job planned no variant";
    return check;
  }
  const VariantRecord& v = variants.front();
  if (v.status == VariantStatus::compiled) {
    check.status = "compiled";
    check.registers = v.registers;
    check.spill_bytes = v.spill_bytes;
    check.smem_bytes = v.smem_bytes;
  } else {
    check.status = "failed";
    check.reason = std::string(to_string(v.status)) + (v.reason.empty() ? "" : ": " + v.reason);
  }
  return check;
}

PredictedCheck PredictedChecks::check(const ProblemQuery& problem, const std::string& arch,
                                      const std::string& template_name, const Config& config,
                                      const SubmissionHost& host) {
  const std::string key = check_key(problem, arch, template_name, config);
  std::unique_lock lock(mutex_);
  if (const auto known = jobs_.find(key); known != jobs_.end()) {
    const std::int64_t id = known->second;
    lock.unlock();
    return state_of(id);
  }
  for (auto it = open_.begin(); it != open_.end();) {
    const std::optional<JobRecord> job = store_.job(*it);
    const bool ended =
        !job || (job->status != JobStatus::queued && job->status != JobStatus::running);
    it = ended ? open_.erase(it) : std::next(it);
  }
  const std::size_t open = open_.size();
  PredictedCheck check;
  if (open >= max_open_ || jobs_.size() >= max_known_) {
    check.status = "not_checked";
    check.reason = open >= max_open_ ? std::to_string(open) +
                                           " checks of predicted configs are open; this one is "
                                           "queued when asked again after they end"
                                     : "the daemon remembers no more checks until it restarts";
    return check;
  }
  JobRequest request;
  request.family = problem.family->name;
  request.dtype = problem.dtype;
  request.shape = problem.shape;
  request.mode = JobMode::compile;
  request.arch = arch;
  nlohmann::json pinned = {{"template", template_name}};
  for (const auto& [axis, value] : config) pinned[axis] = value;
  request.configs = nlohmann::json::array({pinned});
  request.warm_start = false;
  try {
    const JobRecord job = submit_job(plan_job(request, host), store_, scheduler_);
    jobs_.emplace(key, job.id);
    open_.insert(job.id);
    check.status = "queued";
    check.job_id = job.id;
  } catch (const SubmissionError& e) {
    check.status = "failed";
    check.reason = std::string("cannot queue its compile job: ") + e.what();
  }
  return check;
}

}  // namespace kt
