// kerntune family add DIR: registers the family in DIR (manifest.json and its device sources)
// with a daemon started with --allow-user-families, and waits while the daemon compiles one of
// its variants: exit 0 once it is registered, 1 when it is refused or does not compile (the
// NVRTC log is printed).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "client/cli_context.hpp"

namespace kt {

// {"manifest": manifest.json as written, "sources": every *.cuh, *.cu and *.h of the folder}.
// Throws std::runtime_error naming a file it cannot read or a manifest that is not JSON.
nlohmann::ordered_json family_upload_from_dir(const std::filesystem::path& dir);

int run_family_add(const CliContext& ctx, const std::filesystem::path& dir,
                   std::chrono::milliseconds poll = std::chrono::milliseconds(500));

}  // namespace kt
