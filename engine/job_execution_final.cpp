// The final comparison at the end of a tune job: its fastest few variants and the baseline
// re-measured interleaved on one GPU; the job's result (winner, speedup and its interval).
#include "engine/job_execution.hpp"

#include <future>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/gpu_job_scope.hpp"
#include "engine/job_gpu_steps.hpp"
#include "engine/reference_kernel.hpp"
#include "engine/worker_client.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/interleaved_protocol.hpp"
#include "tuner/variant_space.hpp"

namespace kt {

void JobExecution::final_comparison() {
  const int count = ctx_.options.final_candidates;
  if (count < 1) return;
  const auto top = final_candidates(ctx_.store.variants(job_.id, /*gated_only=*/true),
                                    static_cast<std::size_t>(count));
  if (top.empty()) return time_baseline_alone();
  InterleavedRequest request;
  request.timing = ctx_.options.timing;
  for (const VariantRecord& variant : top) {
    try {
      if (auto cv = reload_compiled(cached_kernel(), family_, job_, variant, limits_)) {
        attach_reference(*cv);
        // Only a real baseline is a side of the comparison (an external one is not in-process,
        // and one that failed validation is none).
        bool usable;
        {
          std::lock_guard lock(baseline_mutex_);
          usable = baseline_usable();
        }
        if (!request.baseline && usable) request.baseline = cv->full;
        request.candidates.push_back(
            measure_request(*cv, job_, tolerance(), ctx_.options, ctx_.seed));
      } else {
        spdlog::warn(
            "job {}: variant {} is not in the compile cache; left out of the final "
            "comparison",
            job_.id, variant.id);
      }
    } catch (const std::exception& e) {
      spdlog::warn("job {}: variant {} left out of the final comparison: {}", job_.id, variant.id,
                   e.what());
    }
  }
  if (request.candidates.empty()) return time_baseline_alone();
  request.baseline_seed = mix_seed(ctx_.seed, 0);
  if (request.baseline) keep_baseline_choice(*request.baseline);
  {
    std::lock_guard lock(baseline_mutex_);  // the hang watchdog scales with the baseline
    if (!baseline_us_.empty())
      for (MeasureRequest& c : request.candidates) c.reference_us = baseline_us_.begin()->second;
  }

  const bool serial = job_.pipeline == Pipeline::serial;
  std::vector<int> ordinals = serial ? std::vector<int>{ctx_.ordinals.front()} : ctx_.ordinals;
  GpuJobScope scope(*ctx_.gpus, job_.id, ordinals);
  auto answer = std::make_shared<std::promise<InterleavedResult>>();
  std::future<InterleavedResult> future = answer->get_future();
  ctx_.gpus->post(job_.id, [answer, request](WorkerClient& worker, const DeviceInfo&) {
    try {
      // A fresh worker process: nothing left behind by hundreds of variants (modules, memory,
      // allocator state) weighs on either side; each job's final comparison starts alike.
      worker.stop();
      answer->set_value(worker.measure_interleaved(request));
    } catch (...) {
      answer->set_exception(std::current_exception());
    }
  });
  try {
    const InterleavedResult result = future.get();
    ctx_.store.record_winner_comparison(job_.id, result);
    changed();
    if (!result.baseline_timing) {
      spdlog::info(
          "job {}: final comparison of the top {} (no in-process baseline): winner {} "
          "({}distinguishable from {}, margin {:.2f}%)",
          job_.id, request.candidates.size(), result.winner_variant_id,
          result.distinguishable ? "" : "not ", result.runner_up_variant_id, 100.0 * result.margin);
      return;
    }
    const Speedup s = winner_speedup(result).value_or(Speedup{});
    spdlog::info(
        "job {}: final comparison of the top {} and the baseline: winner {} ({}distinguishable "
        "from {}, margin {:.2f}%), speedup {:.3f} [{:.3f}, {:.3f}]",
        job_.id, request.candidates.size(), result.winner_variant_id,
        result.distinguishable ? "" : "not ", result.runner_up_variant_id, 100.0 * result.margin,
        s.value, s.low, s.high);
  } catch (const std::exception& e) {
    spdlog::warn("job {}: final comparison of the top {} failed: {}", job_.id,
                 request.candidates.size(), e.what());
  }
}

void JobExecution::time_baseline_alone() {
  {
    std::lock_guard lock(baseline_mutex_);
    if (!baseline_us_.empty()) return;
  }
  if (job_.baselines.is_object() && !job_.baselines.empty()) return;
  try {
    ProblemInstance problem = baseline_instance(family_, job_.shape, job_.dtype, limits_);
    // The baseline is checked against the reference before it can be an answer: a kernel
    // reference must be named here as in every variant's instance.
    if (reference_cubin_) attach_reference_kernel(problem, *reference_cubin_);
    const int home = ctx_.ordinals.front();
    GpuJobScope scope(*ctx_.gpus, job_.id, {home});
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> timed = done->get_future();
    ctx_.gpus->post(job_.id, [this, done, problem](WorkerClient& worker, const DeviceInfo& device) {
      try {
        baseline_on(worker, device, problem);
        done->set_value();
      } catch (...) {
        done->set_exception(std::current_exception());
      }
    });
    timed.get();
    std::lock_guard lock(baseline_mutex_);
    if (baseline_failure_)
      spdlog::warn("job {}: no variant to compare, and the baseline failed: no answer", job_.id);
    else
      spdlog::info("job {}: no variant to compare; the baseline is the job's answer", job_.id);
  } catch (const std::exception& e) {
    spdlog::warn("job {}: no variant to compare, and timing the baseline alone failed: {}", job_.id,
                 e.what());
  }
}

void JobExecution::keep_baseline_choice(ProblemInstance& problem) {
  if (!problem.baseline) return;
  nlohmann::json choice;
  {
    std::lock_guard lock(baseline_mutex_);
    if (baseline_choice_) choice = *baseline_choice_;
  }
  if (choice.is_null())
    for (const auto& [gpu, stored] : job_.baselines.items())
      if (stored.contains("baseline")) {
        choice = stored["baseline"];
        break;
      }
  if (!choice.is_object() || choice.value("kind", "") != problem.baseline->kind) return;
  for (const char* key :
       {"algorithm_index", "fast_accumulation", "gate_algorithm_index", "up_algorithm_index"})
    if (choice.contains(key)) problem.baseline->params[key] = choice[key];
}

}  // namespace kt
