// The body of POST /v1/jobs, checked field by field into a NewJob. Nothing is stored here: a
// request that fails any check throws ApiError and leaves the store as it was.
#pragma once

#include <string>

#include "db/model.hpp"
#include "engine/job_target.hpp"
#include "server/app_context.hpp"

namespace kt {

// Errors: 413 body_too_large, 400 invalid_json / invalid_field / unknown_field,
// 404 unknown_family, 422 unknown_dtype / invalid_shape / invalid_mode / unknown_arch /
// arch_mismatch / unknown_device / invalid_budget / invalid_pipeline, 400 invalid_configs (a
// pinned config that is not a point of the space for the job, with the reason), 503 no_device
// (tune mode on a host without a usable GPU).
// The job to store and the target it was checked against (handed on to the scheduler).
struct JobSubmission {
  NewJob job;
  JobTarget target;
  // "warm_start" (default true): seed a learning search with the nearest tuned shapes' best
  // configs (engine/warm_start.hpp); false starts from nothing.
  bool warm_start = true;
};
JobSubmission parse_job_request(const std::string& body, const AppContext& context);

}  // namespace kt
