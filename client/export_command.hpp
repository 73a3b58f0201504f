// kerntune export: a finished job as a recorded space (format "kerntune-space/1"): family, shape,
// dtype, device, and every variant that reached the compiler with its status, median time and
// resource report. A whole-space job (budget 0) recorded this way is what kt-replay replays
// searchers against (tests/data/spaces/).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "client/cli_context.hpp"

namespace kt {

// The space file from GET /v1/jobs/{id} and its variants (pure; the CLI writes it).
nlohmann::json space_from_job(const nlohmann::json& job, const nlohmann::json& variants);

// Writes the file (`path`, "-" for stdout). Warns on stderr when the job did not measure its
// whole space (a budget, or not done): a replay's optimum would be that subset's.
int run_export(const CliContext& ctx, std::int64_t job_id, const std::string& path);

}  // namespace kt
