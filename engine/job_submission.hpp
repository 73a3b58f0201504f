// A job asked for (POST /v1/jobs, or GET /v1/best tuning on a miss), typed: the engine checks it
// against the family and this host, plans it (target, result keys, pinned configs, search, warm
// start), stores it queued and hands it to the scheduler. The server parses the body into a
// JobRequest (server/job_request.hpp) and maps a SubmissionError to its HTTP status.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/job_target.hpp"
#include "engine/problem_query.hpp"
#include "tuner/family.hpp"

namespace kt {

// The request as parsed: every field of its type and range, the family and dtype known, the shape
// checked against the family. Defaults are POST /v1/jobs's.
struct JobRequest {
  std::string family;
  std::string dtype;
  Shape shape;
  JobMode mode = JobMode::tune;
  std::string arch;    // "" = the device's (tune) / required (compile)
  std::string device;  // a selector (select_device); "" = the first GPU
  std::int64_t budget = 0;
  Pipeline pipeline = Pipeline::pipelined;
  // Pinned configs ([{"template", axis: value...}], JSON types checked); null = the whole space.
  nlohmann::json configs = nullptr;
  std::optional<std::string> search;  // nullopt = the default for the job
  double search_seconds = 0;          // 0 = no time limit
  int search_patience = 0;            // 0 = none
  // Seed a learning search with the nearest tuned shapes' best configs (engine/warm_start.hpp).
  bool warm_start = true;
};

// The job to store and the target it was checked against (handed on to the scheduler).
struct JobSubmission {
  NewJob job;
  JobTarget target;
  bool warm_start = true;
};

// Why a request cannot be planned: the target's problems (engine/job_target.hpp), an arch none of
// the family's templates targets, pinned configs outside the space, a search that does not apply.
enum class SubmissionProblem {
  no_device,
  unknown_device,
  arch_mismatch,
  unknown_arch,
  unsupported_arch,
  invalid_configs,
  invalid_search
};

class SubmissionError : public std::runtime_error {
 public:
  SubmissionError(SubmissionProblem problem, const std::string& message)
      : std::runtime_error(message), problem_(problem) {}
  SubmissionProblem problem() const { return problem_; }

 private:
  SubmissionProblem problem_;
};

// What planning reads besides the request.
struct SubmissionHost {
  const Family& family;                    // the request's
  const std::vector<DeviceInfo>& devices;  // this host's GPUs
  const std::string& device_error;         // why there are none, from the probe
};

// The request checked and planned; nothing is stored. Throws SubmissionError.
JobSubmission plan_job(const JobRequest& request, const SubmissionHost& host);

// The planned job warm-started (when its search learns and a nearby shape is tuned), stored
// (queued) and enqueued; the stored job.
JobRecord submit_job(JobSubmission submission, Store& store, JobScheduler& scheduler);

// A tuned problem asked for by GET /v1/best (retune_stale, tune_on_miss): its unfinished tune job
// when one is queued or running, else a new one with POST /v1/jobs's defaults on a GPU of
// device_model ("" = the first). Throws SubmissionError.
struct TuneOnRequest {
  JobRecord job;
  bool new_job = false;
};
TuneOnRequest tune_on_request(const ProblemQuery& problem, const std::string& device_model,
                              Store& store, JobScheduler& scheduler, const SubmissionHost& host);

}  // namespace kt
