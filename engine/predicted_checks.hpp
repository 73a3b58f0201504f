// The check a predicted config gets before anyone relies on it (GET /v1/best?predict=1): the first
// time a config is predicted for a shape, one job of that shape pinned to the config is queued;
// every later prediction of it carries that job's outcome.
// - On a daemon with a GPU of the asked model (any model when none is asked), a check-mode job
//   ("kind": "gpu"): compiled, checked on that GPU against the family's reference on fresh
//   inputs (poisoned outputs, guard regions, per-element tolerances, as every tuned variant) and
//   timed, on the predicted shape itself, so what is checked is the answer given. Its result
//   ranks on no front: the shape stays untuned until a tune job says otherwise. It queues behind
//   the GPU's running job like any other.
// - Else a compile-mode job ("kind": "compile-only": NVRTC and the arch's resource limits).
// Either way: compiled with its resource report, checked with its time and error, or why not (a
// compile error, a resource overflow, a wrong result, a crash or hang).
//
// Bounded: at most max_open checks queued or running at once (a burst of untuned shapes gets the
// rest unchecked, said so, and checked when asked again), and at most max_known remembered.
//
// The answer does not wait for the store: the check is planned on the caller's thread (so a
// config that cannot be checked says why at once) and its job stored and enqueued by a thread of
// its own; until then the answer says "queued" with no job id yet. How many are open is what that
// thread saw last, refreshed when it stores one at the bound and whenever the bound turns a check
// away.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/job_submission.hpp"
#include "engine/problem_query.hpp"
#include "tuner/thread_pool.hpp"

namespace kt {

struct PredictedCheck {
  std::string kind = "compile-only";  // or "gpu": checked against the reference on a GPU
  // "queued", "running", "compiled" (compile-only), "checked" (gpu: right on the GPU, timed),
  // "failed" (it did not compile, fit, or compute the right result: reason says why),
  // "not_checked" (too many checks open: reason says so).
  std::string status;
  std::int64_t job_id = 0;  // the check's job; 0 for not_checked and while it is being stored
  std::string reason;
  std::optional<int> registers, spill_bytes, smem_bytes;  // when compiled
  std::optional<double> measured_us;    // checked: its median time on the GPU, for the shape
  std::optional<double> max_rel_error;  // checked: max |out - ref| / max |ref|
  std::string device_name;              // checked or failed on the GPU: which model
};

class PredictedChecks {
 public:
  PredictedChecks(Store& store, JobScheduler& scheduler, std::size_t max_open = 8,
                  std::size_t max_known = 100000);
  ~PredictedChecks();  // stores the checks already accepted, then joins its thread
  PredictedChecks(const PredictedChecks&) = delete;
  PredictedChecks& operator=(const PredictedChecks&) = delete;

  // The check of `config` of `template_name` for the problem on `arch`: queued now if it never
  // was (within the bounds), else the state of the job that checks it.
  PredictedCheck check(const ProblemQuery& problem, const std::string& arch,
                       const std::string& template_name, const Config& config,
                       const SubmissionHost& host);

  // Waits until every check accepted so far is stored (tests).
  void flush();

 private:
  // A check accepted: its job once stored (0 before), or why it could not be stored.
  struct Known {
    std::string kind;
    std::int64_t job_id = 0;
    std::string failure;
  };
  PredictedCheck state_of(std::int64_t job_id, const std::string& kind);
  // On the queue's thread: stores the planned job of `key`.
  void store_check(const std::string& key, const std::string& kind, JobSubmission submission);
  // On the queue's thread: forgets the open jobs that ended.
  void refresh_open();

  Store& store_;
  JobScheduler& scheduler_;
  std::size_t max_open_, max_known_;
  std::mutex mutex_;
  std::map<std::string, Known> jobs_;  // check key -> its compile job
  std::set<std::int64_t> open_;        // those queued or running when last looked at
  std::size_t storing_ = 0;            // accepted, not stored yet
  bool refreshing_ = false;            // a refresh_open is queued
  // Declared last: joined (its queued checks stored) before the rest goes.
  std::unique_ptr<ThreadPool> queue_;
};

}  // namespace kt
