// What a client needs to launch a stored variant's cubin itself: entry point, arch, grid, block
// and cluster dims and dynamic shared memory evaluated for the job's shape (the manifest's launch
// formulas, through the same instantiate() the compile step and the worker use), and the
// kernel's parameters in order with their types and values or buffers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/model.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

// The limits the job's formulas were evaluated with: its target resolved on this host (the same
// GPU or model), else the recorded part for its arch (a job from a host whose GPUs are gone).
DeviceLimits launch_limits(const JobRecord& job, const std::vector<DeviceInfo>& devices);

// {"kernel", "arch", "grid", "block", "cluster", "dynamic_smem_bytes", "params": [...],
//  "buffers": [...], "shape", "dtype"}; docs/api.md shows it. arch: the cubin's.
// Throws FamilyError / ExpressionError when the variant's template is gone or its manifest no
// longer evaluates.
nlohmann::json variant_launch_json(const Family& family, const JobRecord& job,
                                   const VariantRecord& variant, const std::string& arch,
                                   const DeviceLimits& limits);

// A stored variant's launch for its job's shape, with the family as loaded and the limits of
// launch_limits: served by GET /v1/variants/{id}/launch, inside GET /v1/best and as X-Kernel-*
// headers of the kernel download. nullopt with *why set when it cannot be evaluated (the family or
// template is gone, the manifest no longer evaluates for the job's shape).
std::optional<nlohmann::json> stored_variant_launch(const FamilyRegistry& families,
                                                    const std::vector<DeviceInfo>& devices,
                                                    const JobRecord& job,
                                                    const VariantRecord& variant, std::string* why);

}  // namespace kt
