// The serial pipeline: compile one variant, measure it on the job's own GPU, then the next;
// the baseline the pipelined engine is compared with.
#include "engine/job_execution.hpp"

#include <utility>

#include "engine/gpu_job_scope.hpp"

namespace kt {

bool JobExecution::run_serial(const NextVariant& next) {
  const int home = ctx_.ordinals.front();
  GpuJobScope scope(*ctx_.gpus, job_.id, {home});
  ctx_.store.set_job_gpus(job_.id, 1);
  timeline_.mark_start(JobTimeline::Clock::now());
  while (auto variant = next()) {
    if (interrupted()) {
      finish_interrupted();
      return false;
    }
    CompiledVariant cv = compile(*variant);
    if (cv.failure) continue;
    post_measure(std::move(cv), home);
    ctx_.gpus->wait_below(job_.id, 1);
    rethrow_task_error();
  }
  return true;
}

}  // namespace kt
