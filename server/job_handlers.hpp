// Handlers for jobs and their variants: pure functions of (request, context) -> response. They
// run short store queries and hand work to the scheduler; they never compile or measure.
#pragma once

#include "engine/job_submission.hpp"
#include "engine/problem_query.hpp"
#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/router.hpp"

namespace kt {

// The problem's unfinished tune job, else a new one on a GPU of device_model ("" = the first)
// (engine/job_submission.hpp): GET /v1/best's retune_stale and tune_on_miss. Throws ApiError like
// create_job.
TuneOnRequest start_tuning(AppContext& context, const ProblemQuery& problem,
                           const std::string& device_model);
// The job as GET /v1/jobs/{id} shows it.
nlohmann::json job_view(AppContext& context, const JobRecord& job);

// POST /v1/jobs: validates the body, creates the job (queued) and enqueues it; 202 with the job.
ApiResponse create_job(const ApiRequest& request, AppContext& context);
// GET /v1/jobs/{id}: the job with progress counts, the best measured variant so far and the
// engine's figures ("stats": wall time, variants per minute, compile and GPU-busy time).
ApiResponse get_job(const ApiRequest& request, AppContext& context);
// GET /v1/jobs/{id}/events: 404 for an unknown job, else the job's state for the session to
// stream from (server/event_stream.hpp).
ApiResponse get_job_events(const ApiRequest& request, AppContext& context);
// GET /v1/jobs/{id}/variants[?status=S1,S2][&exclude_pruned=1][&log=1][&limit=N][&cursor=C]:
// one page in id order (server/paging.hpp) with "next", the cursor of the following page.
ApiResponse list_variants(const ApiRequest& request, AppContext& context);
// GET /v1/jobs/{id}/variants.csv: every variant that reached a gate, one row each, its figures
// and one column per config parameter (sorted), as the Python client's to_csv writes them.
ApiResponse list_variants_csv(const ApiRequest& request, AppContext& context);
// DELETE /v1/jobs/{id}: requests cancellation; 409 if the job already finished.
ApiResponse cancel_job(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}[?log=1]
ApiResponse get_variant(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}/kernel: the cubin from the compile cache.
ApiResponse get_kernel(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}/launch: what a client needs to launch the cubin
// (engine/variant_launch.hpp).
ApiResponse get_launch(const ApiRequest& request, AppContext& context);

}  // namespace kt
