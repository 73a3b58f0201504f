#include "engine/job_recorder.hpp"

namespace kt {

void record_compiled(Store& store, const CompiledVariant& cv) {
  if (cv.compile) {
    const CompileResult& result = *cv.compile;
    if (result.ok && !cv.cache_hit)
      store.put_kernel({cv.kernel_key, cv.arch, cv.kernel, nvrtc_version(), cv.cubin, result.log,
                        result.resources});
    const auto& block = cv.full.launch.block;
    store.record_compile(cv.variant_id, result, static_cast<int>(block[0] * block[1] * block[2]),
                         static_cast<int>(cv.full.launch.dynamic_smem));
  }
  if (cv.failure) store.record_outcome(cv.variant_id, *cv.failure);
}

void record_measured(Store& store, const MeasuredVariant& measured) {
  // The outcome last: it ends the variant's lease, and only the lease holder writes the variant.
  store.record_loaded_resources(measured.variant_id, measured.registers, measured.smem_bytes);
  store.record_worker_time(measured.variant_id, measured.gpu_ordinal, measured.measure_ms);
  store.record_outcome(measured.variant_id, measured.outcome);
}

}  // namespace kt
