// A batch (POST /v1/batches): many problems tuned as one request. The server checks each problem
// as a job of its own (engine/job_submission.hpp); here the checked problems are ordered by time
// share, each one found tuned and current, already being tuned, or to be submitted, and then the
// jobs are submitted in that order (the scheduler runs them first come, first served) and the
// batch is stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "engine/best_answer.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/job_submission.hpp"

namespace kt {

// At most this many problems in one batch: a whole model's worth with room to spare.
inline constexpr std::size_t kMaxBatchProblems = 1024;
// A batch's budget per problem when the request names none: a model's dozens of shapes in
// minutes rather than hours.
inline constexpr std::int64_t kDefaultBatchBudget = 64;

// One problem of a batch: as the client sent it, and its request once it parsed as a job of its
// own (POST /v1/jobs's checks of family, dtype and shape); without one it is refused
// (record.note, record.error_code say why).
struct BatchCandidate {
  BatchProblemRecord record;
  std::optional<JobRequest> request;
  std::optional<JobSubmission> submission;  // planned: a job to submit
  std::optional<SubmissionError> refusal;   // the plan's refusal (the server words its code)
};

// What planning a batch reads besides the store.
struct BatchHost {
  const FamilyRegistry& families;
  const std::vector<DeviceInfo>& devices;  // this host's GPUs
  const std::string& device_error;         // why there are none
  const std::vector<DeviceInfo>& launch_devices;
};

// Orders the candidates by share (largest first; ties keep the client's order), folds repeats of
// one problem into the first (shares and calls added), numbers them, and decides each parsed one:
// tuned (an answer on device_model, "" = any, whose keys are all current; not with retune),
// joined (an unfinished tune job of the problem on that model), else planned as a job
// (submission) or refused by the plan (refusal: no GPU, an arch the family lacks...). Reads the
// store, writes nothing.
std::vector<BatchCandidate> plan_batch(std::vector<BatchCandidate> candidates,
                                       const std::string& device_model, bool retune, Store& store,
                                       const BatchHost& host);

// Submits the candidates planned as submitted, in order, then stores the batch with every
// problem (job ids filled in) in one transaction; returns the stored batch.
BatchRecord submit_batch(NewBatch batch, std::vector<BatchCandidate> candidates, Store& store,
                         JobScheduler& scheduler);

// Marks the batch cancelled and cancels its own unfinished jobs (those it joined are left to their
// requests); returns how many it found unfinished. A batch with none of its own left unfinished is
// left as it was (0).
int cancel_batch(const BatchRecord& batch, Store& store, JobScheduler& scheduler);

// Every batch whose deadline (NewBatch::minutes) has passed: marked cancelled and its own
// unfinished jobs cancelled (those it joined are left to their requests). The scheduler calls it
// at each heartbeat, so the deadline holds when no client is watching. Returns how many batches.
int cancel_batches_past_deadline(Store& store, JobScheduler& scheduler);

// What a batch has come to, from its problems' jobs as stored now.
struct BatchState {
  // running (a job it waits on is unfinished; once cancelled, only its own count), done (every
  // problem answered), cancelled, failed (ended with a problem unanswered).
  std::string status;
  std::int64_t problems = 0, tuned_before = 0, refused = 0;
  std::int64_t queued = 0, running = 0, done = 0, failed = 0, cancelled = 0;
  std::int64_t answered = 0;  // tuned before or a job done
};
BatchState batch_state(const BatchRecord& batch, const std::vector<std::optional<JobRecord>>& jobs);

}  // namespace kt
