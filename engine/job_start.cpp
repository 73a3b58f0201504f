#include "engine/job_start.hpp"

#include "engine/reference_kernel.hpp"

namespace kt {

JobStart start_job(const KernelLookup& cached, const KernelCompiler& compile, Store& store,
                   const Family& family, const JobRecord& job, const DeviceLimits& limits,
                   const std::filesystem::path& work_dir) {
  JobStart start;
  if (family.reference.kind == "kernel")
    start.reference_cubin =
        prepare_reference_kernel(cached, compile, store, family, job.dtype, limits, work_dir);
  return start;
}

}  // namespace kt
