// The check a predicted config gets before anyone runs it (GET /v1/best?predict=1): the first time
// a config is predicted for a shape, a compile-mode job of that shape pinned to the config
// (NVRTC and the resource limits of the arch, no GPU) is queued; every later prediction of it
// carries that job's outcome: compiled with its resource report, or why not (a compile error, a
// resource overflow). Checking it on a GPU (validated against the reference on a small shape) is
// not done: the check says "compile-only".
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
#include "engine/thread_pool.hpp"

namespace kt {

struct PredictedCheck {
  // "queued", "running", "compiled", "failed" (the variant did not compile or fit: reason says
  // why), "not_checked" (too many checks open: reason says so).
  std::string status;
  std::int64_t job_id = 0;  // the compile job; 0 for not_checked and while it is being stored
  std::string reason;
  std::optional<int> registers, spill_bytes, smem_bytes;  // when compiled
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
    std::int64_t job_id = 0;
    std::string failure;
  };
  PredictedCheck state_of(std::int64_t job_id);
  // On the queue's thread: stores the planned job of `key`.
  void store_check(const std::string& key, JobSubmission submission);
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
