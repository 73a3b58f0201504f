// The GPU models a batch or a bundle reads results for: a GPU of the daemon's host, or a model
// its store has results for (a store tuned on other hosts, a fleet's).
#pragma once

#include <string>
#include <vector>

#include "client/cli_context.hpp"

namespace kt {

// The daemon's GPUs' model names (GET /v1/devices), first GPU first.
std::vector<std::string> host_gpu_models(const CliContext& ctx);
// Every model the store knows: its devices and the models it has tuned results for.
std::vector<std::string> store_gpu_models(const CliContext& ctx);
// The model `device` names: a host GPU by ordinal, UUID or name part, else a stored model by
// name part; "" = the host's first GPU. Throws ClientError (503 no_device) naming what there is.
std::string resolve_gpu_model(const CliContext& ctx, const std::string& device);

}  // namespace kt
