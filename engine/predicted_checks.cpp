#include "engine/predicted_checks.hpp"

#include <exception>
#include <optional>

#include <nlohmann/json.hpp>

#include "tuner/config.hpp"

namespace kt {
namespace {

std::string check_key(const ProblemQuery& problem, const std::string& arch,
                      const std::string& template_name, const Config& config) {
  return problem.family->name + "|" + problem.family->source_hash + "|" + problem.dtype + "|" +
         arch + "|" + problem.shape_key + "|" + template_name + "|" + canonical_key(config);
}

// The GPU that checks predictions for the problem: one of the asked model (any GPU when no model
// is asked); none means compile only.
const DeviceInfo* checking_gpu(const ProblemQuery& problem,
                               const std::vector<DeviceInfo>& devices) {
  for (const DeviceInfo& device : devices)
    if (problem.device_name.empty() || device.name == problem.device_name) return &device;
  return nullptr;
}

}  // namespace

PredictedChecks::PredictedChecks(Store& store, JobScheduler& scheduler, std::size_t max_open,
                                 std::size_t max_known)
    : store_(store),
      scheduler_(scheduler),
      max_open_(max_open),
      max_known_(max_known),
      queue_(std::make_unique<ThreadPool>(1)) {}

PredictedChecks::~PredictedChecks() {
  queue_.reset();
}

void PredictedChecks::flush() {
  queue_->submit([] {}).wait();
}

PredictedCheck PredictedChecks::state_of(std::int64_t job_id, const std::string& kind) {
  PredictedCheck check;
  check.kind = kind;
  check.job_id = job_id;
  const std::optional<JobRecord> job = store_.job(job_id);
  if (!job) {
    check.status = "failed";
    check.reason = "its job is gone from the store";
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
      check.reason = "its job " + std::string(to_string(job->status)) +
                     (job->reason.empty() ? "" : ": " + job->reason);
      return check;
    case JobStatus::done:
      break;
  }
  const std::vector<VariantRecord> variants = store_.variants(job_id);
  if (variants.empty()) {
    check.status = "failed";
    check.reason = "its job planned no variant";
    return check;
  }
  const VariantRecord& v = variants.front();
  const auto resources = [&] {
    if (v.registers < 0) return;  // never compiled
    check.registers = v.registers;
    check.spill_bytes = v.spill_bytes;
    check.smem_bytes = v.smem_bytes;
  };
  if (job->mode == JobMode::check) check.device_name = job->device_name;
  const bool right_on_gpu =
      job->mode == JobMode::check && v.status == VariantStatus::measured && v.timing && v.error;
  if (job->mode == JobMode::compile && v.status == VariantStatus::compiled) {
    check.status = "compiled";
    resources();
  } else if (right_on_gpu) {
    check.status = "checked";
    resources();
    check.measured_us = v.timing->median_us;
    check.max_rel_error = v.error->max_rel;
  } else {
    resources();
    check.status = "failed";
    check.reason = std::string(to_string(v.status)) + (v.reason.empty() ? "" : ": " + v.reason);
  }
  return check;
}

PredictedCheck PredictedChecks::check(const ProblemQuery& problem, const std::string& arch,
                                      const std::string& template_name, const Config& config,
                                      const SubmissionHost& host) {
  const std::string key = check_key(problem, arch, template_name, config);
  const DeviceInfo* gpu = checking_gpu(problem, host.devices);
  PredictedCheck check;
  check.kind = gpu ? "gpu" : "compile-only";
  {
    std::lock_guard lock(mutex_);
    if (const auto known = jobs_.find(key); known != jobs_.end()) {
      check.kind = known->second.kind;
      check.job_id = known->second.job_id;
      if (!known->second.failure.empty()) {
        check.status = "failed";
        check.reason = known->second.failure;
        return check;
      }
      if (check.job_id == 0) {
        check.status = "queued";  // accepted, its job not stored yet
        return check;
      }
    } else {
      const std::size_t open = open_.size() + storing_;
      if (open >= max_open_ || jobs_.size() >= max_known_) {
        check.status = "not_checked";
        check.reason = open >= max_open_
                           ? std::to_string(open) +
                                 " checks of predicted configs are open; this one is queued when "
                                 "asked again after they end"
                           : "the daemon remembers no more checks until it restarts";
        if (open >= max_open_ && !refreshing_ && !open_.empty()) {
          refreshing_ = true;
          queue_->submit([this] { refresh_open(); });
        }
        return check;
      }
    }
  }
  if (check.job_id > 0) return state_of(check.job_id, check.kind);

  JobRequest request;
  request.family = problem.family->name;
  request.dtype = problem.dtype;
  request.shape = problem.shape;
  if (gpu) {
    request.mode = JobMode::check;
    request.device = gpu->uuid;
  } else {
    request.mode = JobMode::compile;
    request.arch = arch;
  }
  nlohmann::json pinned = {{"template", template_name}};
  for (const auto& [axis, value] : config) pinned[axis] = value;
  request.configs = nlohmann::json::array({pinned});
  request.warm_start = false;
  std::optional<JobSubmission> planned;
  try {
    planned.emplace(plan_job(request, host));
  } catch (const SubmissionError& e) {
    check.status = "failed";
    check.reason = std::string("cannot queue its check: ") + e.what();
    return check;
  }
  {
    std::lock_guard lock(mutex_);
    // Two requests may have planned the same check at once: the first to get here queues it.
    if (!jobs_.emplace(key, Known{.kind = check.kind, .job_id = 0, .failure = {}}).second) {
      check.status = "queued";
      return check;
    }
    ++storing_;
  }
  queue_->submit([this, key, kind = check.kind, submission = std::move(*planned)]() mutable {
    store_check(key, kind, std::move(submission));
  });
  check.status = "queued";
  return check;
}

void PredictedChecks::store_check(const std::string& key, const std::string& kind,
                                  JobSubmission submission) {
  // Only at the bound does it matter which open jobs ended (reading each back from the store
  // before every check cost the daemon a tenth of its CPU under a burst of untuned shapes).
  bool at_bound = false;
  {
    std::lock_guard lock(mutex_);
    at_bound = open_.size() + storing_ >= max_open_;
  }
  if (at_bound) refresh_open();
  Known known;
  known.kind = kind;
  try {
    known.job_id = submit_job(std::move(submission), store_, scheduler_).id;
  } catch (const std::exception& e) {
    known.failure = std::string("cannot queue its check: ") + e.what();
  }
  std::lock_guard lock(mutex_);
  jobs_[key] = known;
  --storing_;
  if (known.job_id > 0) open_.insert(known.job_id);
}

void PredictedChecks::refresh_open() {
  std::set<std::int64_t> open;
  {
    std::lock_guard lock(mutex_);
    open = open_;
    refreshing_ = false;
  }
  // One query for the store's queued and running jobs, not a job read back per open check (at
  // the bound under a burst of untuned shapes that ran after nearly every answer).
  std::set<std::int64_t> unfinished;
  try {
    for (const std::int64_t id : store_.unfinished_jobs()) unfinished.insert(id);
  } catch (const std::exception&) {
    return;  // the store is unreachable: the jobs stay counted until a later refresh
  }
  std::lock_guard lock(mutex_);
  for (const std::int64_t id : open)
    if (!unfinished.count(id)) open_.erase(id);
}

}  // namespace kt
