// A stored variant's launch description for a client (engine/variant_launch.hpp evaluates it):
// served by GET /v1/variants/{id}/launch, inside GET /v1/best, and as X-Kernel-* headers of the
// kernel download.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "db/model.hpp"
#include "server/app_context.hpp"

namespace kt {

// nullopt with *why set when it cannot be evaluated (the family or template is gone, the manifest
// no longer evaluates for the job's shape).
std::optional<nlohmann::json> launch_view(AppContext& context, const JobRecord& job,
                                          const VariantRecord& variant, std::string* why);

}  // namespace kt
