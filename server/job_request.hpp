// The body of POST /v1/jobs, checked field by field into the engine's typed JobRequest
// (engine/job_submission.hpp), and the engine's refusals as API errors. Nothing is stored here: a
// request that fails any check throws ApiError and leaves the store as it was.
#pragma once

#include <string>

#include "engine/job_submission.hpp"
#include "server/api_response.hpp"
#include "server/app_context.hpp"

namespace kt {

// Errors: 413 body_too_large, 400 invalid_json / invalid_field / unknown_field / invalid_configs
// (a config of the wrong JSON types), 404 unknown_family, 422 unknown_dtype / invalid_shape /
// invalid_mode / invalid_budget / invalid_pipeline / invalid_search (search_seconds,
// search_patience out of range).
JobRequest parse_job_request(const std::string& body, const AppContext& context);

// What planning reads of the daemon for a request of this family.
SubmissionHost submission_host(const Family& family, const AppContext& context);

// The engine's refusal as the API says it: 503 no_device, 422 unknown_device / arch_mismatch /
// unknown_arch / unsupported_arch / invalid_search, 400 invalid_configs (a pinned config that is
// not a point of the space for the job, with the reason).
ApiError api_error_of(const SubmissionError& error);

// parse_job_request, then the engine's plan (engine/job_submission.hpp) with its refusals as
// ApiError: every check of POST /v1/jobs, nothing stored.
JobSubmission plan_job_request(const std::string& body, const AppContext& context);

}  // namespace kt
