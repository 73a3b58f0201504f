// The pipelined pipeline: compiles run ahead on the compile pool (every core) while the GPUs
// measure; each compiled variant becomes a GPU task that any GPU of the job's model may take.
#include "engine/job_execution.hpp"

#include <utility>

#include "engine/gpu_job_scope.hpp"

namespace kt {

bool JobExecution::run_pipelined(const NextVariant& next, std::size_t lookahead) {
  GpuJobScope scope(*ctx_.gpus, job_.id, ctx_.ordinals);
  ctx_.store.set_job_gpus(job_.id, static_cast<int>(ctx_.ordinals.size()));
  timeline_.mark_start(JobTimeline::Clock::now());
  const std::size_t depth = 2 * ctx_.ordinals.size();
  CompileQueue compiling;
  DrainOnExit drain_on_exit{compiling};
  bool more = true;
  while (more || !compiling.empty()) {
    more = fill(compiling, next, lookahead, /*timed=*/false);
    if (compiling.empty()) break;
    CompiledVariant cv = take_front(compiling);
    if (interrupted()) {
      drain(compiling);
      stop_gpu_work();
      finish_interrupted();
      return false;
    }
    rethrow_task_error();
    if (cv.failure) continue;
    ctx_.gpus->wait_below(job_.id, depth);
    post_measure(std::move(cv), std::nullopt);
  }
  ctx_.gpus->wait_below(job_.id, 1);
  rethrow_task_error();
  return true;
}

}  // namespace kt
