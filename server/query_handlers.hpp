// Handlers for read-only queries: best configs, Pareto fronts, job history, families, devices,
// health. Pure functions of (request, context) -> response, like the job handlers.
#pragma once

#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/router.hpp"

namespace kt {

// GET /v1/best?family=&dtype=&<dims>&device=  (404 not_tuned when nothing is measured)
ApiResponse get_best(const ApiRequest& request, AppContext& context);
// GET /v1/pareto?family=&dtype=&<dims>&device=  (an empty front is 200 with "front":[])
ApiResponse get_pareto(const ApiRequest& request, AppContext& context);
// GET /v1/history?family=&status=&limit=&cursor=  (newest first, paged like the variants;
// the deprecated offset still works on a first page)
ApiResponse get_history(const ApiRequest& request, AppContext& context);
// GET /v1/families
ApiResponse get_families(const ApiRequest& request, AppContext& context);
// GET /v1/devices
ApiResponse get_devices(const ApiRequest& request, AppContext& context);
// GET /healthz
ApiResponse get_health(const ApiRequest& request, AppContext& context);

}  // namespace kt
