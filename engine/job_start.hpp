// What every job does before its first variant, in one place that planned, searched, pinned and
// compile-only jobs all pass through: a family whose reference is a kernel has it compiled for the
// job's arch and dtype (through the kernel cache), so a reference that does not compile fails the
// job at its start, with the NVRTC log — also for a compile-only job on a machine with no GPU,
// where it would otherwise show only once a tune job reached a GPU.
#pragma once

#include <filesystem>
#include <optional>

#include "db/store.hpp"
#include "engine/job_compile.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

struct JobStart {
  // The compiled reference kernel, named in every problem instance the job hands to a worker;
  // unset for a family whose reference is built into the worker (e.g. cuBLAS).
  std::optional<std::filesystem::path> reference_cubin;
};

// Throws std::runtime_error (the job fails with it) when the reference does not compile.
JobStart start_job(const KernelLookup& cached, const KernelCompiler& compile, Store& store,
                   const Family& family, const JobRecord& job, const DeviceLimits& limits,
                   const std::filesystem::path& work_dir);

}  // namespace kt
