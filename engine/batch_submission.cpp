#include "engine/batch_submission.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <spdlog/spdlog.h>

#include "engine/job_events.hpp"
#include "engine/problem_query.hpp"

namespace kt {
namespace {

using ProblemKey = std::tuple<std::string, std::string, std::string>;  // family, dtype, shape key

ProblemKey key_of(const BatchProblemRecord& record) {
  return {record.family, record.dtype, canonical_key(record.shape)};
}

std::string changed_keys(const Staleness& staleness) {
  std::string text;
  for (const ChangedKey& key : staleness.changed) text += (text.empty() ? "" : ", ") + key.key;
  return text;
}

}  // namespace

std::vector<BatchCandidate> plan_batch(std::vector<BatchCandidate> candidates,
                                       const std::string& device_model, bool retune, Store& store,
                                       const BatchHost& host) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const BatchCandidate& a, const BatchCandidate& b) {
                     return a.record.share > b.record.share;
                   });
  // Repeats of a problem fold into its first (and largest) entry: one job, the shares added.
  std::vector<BatchCandidate> folded;
  std::map<ProblemKey, std::size_t> seen;
  for (BatchCandidate& candidate : candidates) {
    const ProblemKey key = key_of(candidate.record);
    if (const auto it = seen.find(key); it != seen.end()) {
      folded[it->second].record.share += candidate.record.share;
      folded[it->second].record.calls += candidate.record.calls;
      continue;
    }
    seen.emplace(key, folded.size());
    folded.push_back(std::move(candidate));
  }
  std::vector<JobRecord> unfinished;
  for (std::int64_t id : store.unfinished_jobs())
    if (auto job = store.job(id); job && job->mode == JobMode::tune)
      unfinished.push_back(std::move(*job));
  const AnswerSources sources{host.families, host.devices, host.launch_devices};
  for (std::size_t i = 0; i < folded.size(); ++i) {
    BatchCandidate& candidate = folded[i];
    candidate.record.position = static_cast<int>(i);
    if (!candidate.request) {
      candidate.record.plan = BatchPlan::refused;
      continue;
    }
    const JobRequest& request = *candidate.request;
    ProblemQuery problem;
    problem.family = host.families.find(request.family);
    problem.dtype = request.dtype;
    problem.shape = request.shape;
    problem.shape_key = canonical_key(request.shape);
    problem.device_name = device_model;
    if (problem.family == nullptr) {  // parsed against the registry: cannot happen
      candidate.record.plan = BatchPlan::refused;
      candidate.record.note = "family " + request.family + " is no longer loaded";
      continue;
    }
    const auto running = std::find_if(unfinished.begin(), unfinished.end(), [&](const auto& j) {
      return j.family == request.family && j.dtype == request.dtype &&
             j.shape_key == problem.shape_key &&
             (device_model.empty() || j.device_name == device_model);
    });
    if (running != unfinished.end()) {
      candidate.record.plan = BatchPlan::joined;
      candidate.record.job_id = running->id;
      candidate.record.note = "already being tuned by job " + std::to_string(running->id) + " (" +
                              std::string(to_string(running->status)) + ")";
      continue;
    }
    std::string stale;
    if (!retune)
      if (const auto answer = best_answer(store, problem, false, sources)) {
        if (answer->staleness.changed.empty()) {
          candidate.record.plan = BatchPlan::tuned;
          candidate.record.job_id = answer->job.id;
          candidate.record.note = "tuned before (job " + std::to_string(answer->job.id) + ")";
          continue;
        }
        stale = "stale (" + changed_keys(answer->staleness) + " changed)";
      }
    try {
      candidate.submission = plan_job(request, {*problem.family, host.devices, host.device_error});
      candidate.record.plan = BatchPlan::submitted;
      candidate.record.note = stale;
    } catch (const SubmissionError& error) {
      candidate.record.plan = BatchPlan::refused;
      // POST /v1/jobs's hint to compile only is not a batch's: batches tune.
      const std::string why = error.problem() != SubmissionProblem::no_device
                                  ? std::string(error.what())
                                  : "no GPU on this host (" +
                                        (host.device_error.empty() ? std::string("no device found")
                                                                   : host.device_error) +
                                        ")";
      candidate.record.note = (stale.empty() ? "" : stale + ": ") + why;
      candidate.refusal = error;
    }
  }
  return folded;
}

BatchRecord submit_batch(NewBatch batch, std::vector<BatchCandidate> candidates, Store& store,
                         JobScheduler& scheduler) {
  batch.problems.clear();
  for (BatchCandidate& candidate : candidates) {
    if (candidate.record.plan == BatchPlan::submitted && candidate.submission) {
      const JobRecord job = submit_job(std::move(*candidate.submission), store, scheduler);
      candidate.record.job_id = job.id;
      if (batch.device_model.empty()) batch.device_model = job.device_name;
    }
    batch.problems.push_back(std::move(candidate.record));
  }
  const std::int64_t id = store.create_batch(batch);
  auto stored = store.batch(id);
  if (!stored) throw std::runtime_error("batch " + std::to_string(id) + " vanished after insert");
  return std::move(*stored);
}

int cancel_batch(const BatchRecord& batch, Store& store, JobScheduler& scheduler) {
  std::vector<std::int64_t> open;
  for (const BatchProblemRecord& problem : batch.problems) {
    if (problem.plan != BatchPlan::submitted || !problem.job_id) continue;
    const auto job = store.job(*problem.job_id);
    if (job && !is_finished(job->status)) open.push_back(job->id);
  }
  if (open.empty()) return 0;
  store.request_batch_cancel(batch.id);  // first: a view read meanwhile says it is cancelling
  for (std::int64_t id : open) scheduler.cancel(id);  // false: it ended meanwhile
  return static_cast<int>(open.size());
}

int cancel_batches_past_deadline(Store& store, JobScheduler& scheduler) {
  int cancelled = 0;
  for (const BatchRecord& batch : store.batches_past_deadline()) {
    const int jobs = cancel_batch(batch, store, scheduler);
    if (jobs == 0) store.request_batch_cancel(batch.id);  // so that it is not found again
    spdlog::info("batch {}: its {} minute(s) ran out; {} unfinished job(s) of its own cancelled",
                 batch.id, batch.minutes.value_or(0), jobs);
    ++cancelled;
  }
  return cancelled;
}

BatchState batch_state(const BatchRecord& batch,
                       const std::vector<std::optional<JobRecord>>& jobs) {
  BatchState state;
  bool waiting = false;  // on a job of its own, or (until cancelled) on one it joined
  state.problems = static_cast<std::int64_t>(batch.problems.size());
  for (std::size_t i = 0; i < batch.problems.size(); ++i) {
    const BatchProblemRecord& problem = batch.problems[i];
    if (problem.plan == BatchPlan::refused) {
      ++state.refused;
      continue;
    }
    if (problem.plan == BatchPlan::tuned) {
      ++state.tuned_before;
      ++state.answered;
      continue;
    }
    const std::optional<JobRecord>& job = i < jobs.size() ? jobs[i] : std::nullopt;
    if (!job) {
      ++state.failed;  // its job is gone from the store
      continue;
    }
    if (!is_finished(job->status) &&
        (problem.plan == BatchPlan::submitted || !batch.cancel_requested))
      waiting = true;
    switch (job->status) {
      case JobStatus::queued:
        ++state.queued;
        break;
      case JobStatus::running:
        ++state.running;
        break;
      case JobStatus::done:
        ++state.done;
        ++state.answered;
        break;
      case JobStatus::failed:
        ++state.failed;
        break;
      case JobStatus::cancelled:
        ++state.cancelled;
        break;
    }
  }
  if (waiting)
    state.status = "running";
  else if (state.answered == state.problems)
    state.status = "done";
  else if (batch.cancel_requested)
    state.status = "cancelled";
  else
    state.status = "failed";
  return state;
}

}  // namespace kt
