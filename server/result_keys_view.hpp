// How a stored result shows what it was tuned with and whether that still holds
// (engine/result_keys.hpp): every job view, history entry and /v1/best answer carries
//   "keys": {"gpu_model", "driver_version", "nvrtc_version", "family_hash"}  (null = not recorded)
//   "stale": true when a recorded key differs from this daemon's,
//   "stale_keys": [{"key", "stored", "current"}]  (empty when not stale).
#pragma once

#include <nlohmann/json.hpp>

#include "db/model.hpp"
#include "engine/result_keys.hpp"
#include "server/app_context.hpp"

namespace kt {

void add_staleness(nlohmann::json& view, const Staleness& staleness);
// The job's staleness against this daemon's keys (engine/result_keys.hpp), added to its view.
void add_staleness(nlohmann::json& view, const JobRecord& job, const AppContext& context);

}  // namespace kt
