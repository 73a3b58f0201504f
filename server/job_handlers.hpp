// Handlers for jobs and their variants: pure functions of (request, context) -> response. They
// run short store queries and hand work to the scheduler; they never compile or measure.
#pragma once

#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/router.hpp"

namespace kt {

// A job body (POST /v1/jobs's) validated, warm-started when its search learns and a nearby shape
// is tuned, stored (queued) and enqueued; the stored job. Throws ApiError like create_job.
JobRecord submit_job(const std::string& body, AppContext& context);
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
// DELETE /v1/jobs/{id}: requests cancellation; 409 if the job already finished.
ApiResponse cancel_job(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}[?log=1]
ApiResponse get_variant(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}/kernel: the cubin from the compile cache.
ApiResponse get_kernel(const ApiRequest& request, AppContext& context);
// GET /v1/variants/{id}/launch: what a client needs to launch the cubin (server/launch_view.hpp).
ApiResponse get_launch(const ApiRequest& request, AppContext& context);

}  // namespace kt
