// A family's "kernel" reference, compiled once per job for the job's arch and dtype through the
// content-addressed kernel cache (the same cache, key and store as variants), written where the
// worker reads cubins, and named in every problem instance the job hands to a worker
// (reference.params["cubin_path"]). A reference that does not compile fails the job: no variant
// could be checked. Its magnitude kernel (reference.magnitude), when the family has one, is in the
// same cubin.
#pragma once

#include <filesystem>
#include <string>

#include "db/store.hpp"
#include "engine/job_compile.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

// Returns the cubin's path under work_dir. Throws std::runtime_error naming the kernel, its source
// and the arch, with the whole NVRTC log, when it does not compile (or the compile process died),
// or naming the magnitude kernel when the cubin lacks it.
std::filesystem::path prepare_reference_kernel(const KernelLookup& cached,
                                               const KernelCompiler& compile, Store& store,
                                               const Family& family, const std::string& dtype,
                                               const DeviceLimits& limits,
                                               const std::filesystem::path& work_dir);

// Names the compiled reference in the instance (a no-op for other reference kinds).
void attach_reference_kernel(ProblemInstance& problem, const std::filesystem::path& cubin);

}  // namespace kt
