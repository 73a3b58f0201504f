// What a GPU lane does for the job: time the family's baseline on that GPU before its first
// variant, then measure each variant posted to it and record the result.
#include "engine/job_execution.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "engine/job_gpu_steps.hpp"
#include "engine/job_recorder.hpp"
#include "engine/worker_client.hpp"
#include "tuner/family_baseline.hpp"

namespace kt {

void JobExecution::post_measure(CompiledVariant cv, std::optional<int> pinned) {
  const MeasureRequest request = measure_request(cv, job_, tolerance(), ctx_.options, ctx_.seed);
  cv.cubin.clear();  // on disk now; the worker reads it from there
  auto compiled = std::make_shared<const CompiledVariant>(std::move(cv));
  ctx_.gpus->post(
      job_.id,
      [this, compiled, request](WorkerClient& worker, const DeviceInfo& device) {
        try {
          MeasureRequest on_gpu = request;
          const BaselineOnGpu baseline = baseline_on(worker, device, compiled->full);
          on_gpu.reference_us = baseline.us;  // the hang watchdog scales with it
          // A speedup only over a baseline that is one (never over a reference kernel, nor
          // over a baseline that failed validation).
          const std::optional<double> speedup_over =
              baseline.speedup_base ? std::optional<double>(baseline.us) : std::nullopt;
          const MeasuredVariant measured = measure_variant(worker, device, on_gpu, *compiled,
                                                           speedup_over, ctx_.options, timeline_);
          try {
            record_measured(ctx_.store, measured);
          } catch (const LeaseLost& lost) {
            spdlog::warn("job {}: {}", job_.id, lost.what());
            return;
          }
          changed();
          if (ctx_.metrics) {
            ctx_.metrics->variant_ended(measured.outcome.status);
            ctx_.metrics->measured(measured.gpu_ordinal, measured.measure_ms / 1000.0);
          }
          publish_timing();
        } catch (const std::exception& e) {
          note_task_error("variant " + std::to_string(compiled->variant_id) + ": " + e.what());
        }
      },
      pinned);
}

JobExecution::BaselineOnGpu JobExecution::baseline_on(WorkerClient& worker,
                                                      const DeviceInfo& device,
                                                      const ProblemInstance& problem) {
  {
    std::lock_guard lock(baseline_mutex_);
    if (const auto it = baseline_us_.find(device.ordinal); it != baseline_us_.end())
      return {it->second, baseline_usable()};
  }
  BaselineTimingRequest request;
  request.problem = problem;
  request.seed = mix_seed(ctx_.seed, 0);
  request.timing = ctx_.options.timing;
  // Without an in-process baseline the reference kernel is timed, for the watchdog alone: it
  // writes fp32 elsewhere, so there is nothing to check, and nothing becomes reference_us.
  const bool speedups = has_speedup_baseline(family_);
  if (speedups) request.tolerance = baseline_check_tolerance(tolerance());
  std::string reason;
  const auto answer = worker.time_baseline(request, fallback_watchdog(ctx_.options), &reason);
  if (!answer && !speedups)
    throw std::runtime_error("timing the reference on GPU " + std::to_string(device.ordinal) +
                             " failed: " + reason);
  if (!answer || answer->validation_failed) {
    const std::string why = answer ? *answer->validation_failed
                                   : "timing the baseline on GPU " +
                                         std::to_string(device.ordinal) + " failed: " + reason;
    return baseline_failed(device, why, answer);
  }
  if (speedups) ctx_.store.record_job_baseline(job_.id, device.ordinal, *answer);
  spdlog::info("job {}: {} on GPU {}: {:.2f} us ({})", job_.id,
               speedups ? "baseline" : "reference kernel (watchdog only)", device.ordinal,
               answer->timing.median_us, answer->baseline.dump());
  std::lock_guard lock(baseline_mutex_);
  baseline_us_[device.ordinal] = answer->timing.median_us;
  if (!baseline_choice_) baseline_choice_ = answer->baseline;
  return {answer->timing.median_us, speedups && !baseline_failure_};
}

JobExecution::BaselineOnGpu JobExecution::baseline_failed(
    const DeviceInfo& device, const std::string& why, const std::optional<BaselineTiming>& answer) {
  spdlog::warn(
      "job {}: baseline_failed on GPU {}: {}; the job goes on against the reference "
      "alone",
      job_.id, device.ordinal, why);
  ctx_.store.record_job_baseline_failure(
      job_.id, device.ordinal, why,
      answer ? answer->baseline : nlohmann::json{{"kind", baseline_summary(family_)["kind"]}});
  changed();
  // A wrong baseline's time still sizes the hang watchdog; a missing one leaves the fallback.
  const double us = answer ? answer->timing.median_us : 0;
  std::lock_guard lock(baseline_mutex_);
  baseline_us_[device.ordinal] = us;
  baseline_failure_ = why;
  return {us, false};
}

bool JobExecution::baseline_usable() const {
  return has_speedup_baseline(family_) && !baseline_failure_ && !job_baseline_failure(job_);
}

}  // namespace kt
