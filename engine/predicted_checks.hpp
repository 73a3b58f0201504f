// The check a predicted config gets before anyone runs it (GET /v1/best?predict=1): the first time
// a config is predicted for a shape, a compile-mode job of that shape pinned to the config
// (NVRTC and the resource limits of the arch, no GPU) is queued; every later prediction of it
// carries that job's outcome: compiled with its resource report, or why not (a compile error, a
// resource overflow). Checking it on a GPU (validated against the reference on a small shape) is
// not done: the check says "compile-only".
//
// Bounded: at most max_open checks queued or running at once (a burst of untuned shapes gets the
// rest unchecked, said so, and checked when asked again), and at most max_known remembered.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/job_submission.hpp"
#include "engine/problem_query.hpp"

namespace kt {

struct PredictedCheck {
  // "queued", "running", "compiled", "failed" (the variant did not compile or fit: reason says
  // why), "not_checked" (too many checks open: reason says so).
  std::string status;
  std::int64_t job_id = 0;  // the compile job; 0 for not_checked
  std::string reason;
  std::optional<int> registers, spill_bytes, smem_bytes;  // when compiled
};

class PredictedChecks {
 public:
  PredictedChecks(Store& store, JobScheduler& scheduler, std::size_t max_open = 8,
                  std::size_t max_known = 100000);

  // The check of `config` of `template_name` for the problem on `arch`: queued now if it never
  // was (within the bounds), else the state of the job that checks it.
  PredictedCheck check(const ProblemQuery& problem, const std::string& arch,
                       const std::string& template_name, const Config& config,
                       const SubmissionHost& host);

 private:
  PredictedCheck state_of(std::int64_t job_id);

  Store& store_;
  JobScheduler& scheduler_;
  std::size_t max_open_, max_known_;
  std::mutex mutex_;
  std::map<std::string, std::int64_t> jobs_;  // check key -> its compile job
  std::set<std::int64_t> open_;               // those queued or running when last looked at
};

}  // namespace kt
