// Compile-only jobs (JobMode::compile): compiles on the pool, no GPU; the outcome of a variant
// that compiled is "compiled".
#include "engine/job_execution.hpp"

#include <spdlog/spdlog.h>

namespace kt {

bool JobExecution::run_compile_only(const NextVariant& next) {
  CompileQueue compiling;
  DrainOnExit drain_on_exit{compiling};
  bool more = true;
  while (more || !compiling.empty()) {
    // Serial: one compile at a time, the baseline for compile throughput too.
    const std::size_t lookahead =
        job_.pipeline == Pipeline::serial ? 1 : 2 * ctx_.compile_pool.size();
    more = fill(compiling, next, lookahead, /*timed=*/true);
    if (compiling.empty()) break;
    CompiledVariant cv = take_front(compiling);
    if (interrupted()) {
      drain(compiling);
      finish_interrupted();
      return false;
    }
    if (!cv.failure) {
      VariantOutcome outcome;
      outcome.status = VariantStatus::compiled;
      try {
        ctx_.store.record_outcome(cv.variant_id, outcome);
        if (ctx_.metrics) ctx_.metrics->variant_ended(VariantStatus::compiled);
      } catch (const LeaseLost& lost) {
        spdlog::warn("job {}: {}", job_.id, lost.what());
      }
    }
    changed();
    publish_timing();
  }
  return true;
}

}  // namespace kt
