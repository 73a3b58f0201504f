// Handlers for batches (POST /v1/batches): many problems tuned as one request, largest time share
// first, those tuned and current skipped. Pure functions of (request, context) -> response; each
// problem is checked as POST /v1/jobs checks a job, the jobs are handed to the scheduler.
#pragma once

#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/router.hpp"

namespace kt {

// POST /v1/batches: {"problems": [{"family", "shape", "dtype", "share"?, "calls"?}...], "device"?,
// "budget_per_shape"?, "search"?, "retune"?, "label"?, "dry_run"?}. 201 with the batch; with
// dry_run, 200 with the plan and nothing stored. A problem that fails its checks is refused in the
// batch (with its error); 400 for a malformed body or problem, 422 nothing_to_tune when every
// problem is refused, 503 no_device.
ApiResponse create_batch(const ApiRequest& request, AppContext& context);
// GET /v1/batches[?limit=N][&cursor=C]: newest first, each with its counts (no problems).
ApiResponse list_batches(const ApiRequest& request, AppContext& context);
// GET /v1/batches/{id}: the batch, each problem with its job's state and, once tuned, its answer.
ApiResponse get_batch(const ApiRequest& request, AppContext& context);
// DELETE /v1/batches/{id}: cancels the unfinished jobs the batch submitted (not those it joined);
// 409 batch_finished when none is left running.
ApiResponse cancel_batch(const ApiRequest& request, AppContext& context);

}  // namespace kt
