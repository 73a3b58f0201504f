#include "engine/job_runner.hpp"

#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "engine/job_compile.hpp"
#include "engine/job_gpu_steps.hpp"
#include "engine/job_plan.hpp"
#include "engine/job_recorder.hpp"
#include "engine/job_search.hpp"
#include "engine/job_stats.hpp"
#include "engine/job_start.hpp"
#include "engine/reference_kernel.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/interleaved_protocol.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using CompileQueue = std::deque<std::future<CompiledVariant>>;

// Waits for every task still in the queue. Runs in a destructor, so it must not throw: a future
// without state (already taken by get()) has nothing left to wait for and is skipped, where
// wait() would throw std::future_error.
void drain(CompileQueue& compiling) noexcept {
  for (auto& future : compiling)
    if (future.valid()) future.wait();
  compiling.clear();
}

// The next compiled variant, off the queue before get(): get() releases the future's state even
// when it throws (the task's exception), and a spent future left at the front is one that drain
// could not wait for.
CompiledVariant take_front(CompileQueue& compiling) {
  std::future<CompiledVariant> front = std::move(compiling.front());
  compiling.pop_front();
  return front.get();
}

// Compile tasks refer to the execution: never leave (even by exception) while one is in flight.
struct DrainOnExit {
  CompileQueue& queue;
  ~DrainOnExit() { drain(queue); }
};

// The job's queue on the GPU pool, for as long as the job runs. On every way out the job's queued
// GPU tasks are dropped and the running ones awaited, since they refer to the execution.
class GpuJobScope {
 public:
  GpuJobScope(GpuPool& pool, std::int64_t job_id, std::vector<int> ordinals)
      : pool_(pool), job_id_(job_id) {
    pool_.open(job_id_, std::move(ordinals));
  }
  ~GpuJobScope() {
    pool_.drop_queued(job_id_);
    pool_.wait_below(job_id_, 1);
    pool_.close(job_id_);
  }
  GpuJobScope(const GpuJobScope&) = delete;
  GpuJobScope& operator=(const GpuJobScope&) = delete;

 private:
  GpuPool& pool_;
  std::int64_t job_id_;
};

class JobExecution {
 public:
  JobExecution(JobRecord job, const Family& family, DeviceLimits limits, JobRunContext& ctx)
      : job_(std::move(job)),
        family_(family),
        limits_(std::move(limits)),
        ctx_(ctx),
        base_wall_seconds_(job_.wall_seconds.value_or(0)),
        base_busy_seconds_(job_.gpu_busy_seconds.value_or(0)) {}

  void run() {
    ctx_.store.set_job_status(job_.id, JobStatus::running);
    changed();
    // Before any variant: a reference that cannot be compiled fails the job here, whatever kind
    // of job it is (engine/job_start.hpp).
    reference_cubin_ = start_job(cached_kernel(), compiler(), ctx_.store, family_, job_, limits_,
                                 ctx_.options.work_dir)
                           .reference_cubin;
    if (uses_searcher(job_)) return run_searched();
    const JobPlan plan = plan_job(family_, job_, limits_, false, [this] { return interrupted(); });
    if (plan.stopped) return finish_interrupted();
    const auto rows = ctx_.store.plan_variants(job_.id, plan.rows, plan.pruned);
    std::size_t pending = 0;
    for (const auto& row : rows)
      if (row.status == VariantStatus::pending) ++pending;
    std::int64_t pruned = 0;
    for (const PrunedGroup& group : plan.pruned) pruned += group.count;
    spdlog::info("job {}: {} {} {} on {} ({}): {} variants planned, {} pruned, {} to run", job_.id,
                 family_.name, job_.shape_key, job_.dtype, limits_.arch,
                 job_.mode == JobMode::compile ? "compile only" : to_string(job_.pipeline),
                 rows.size(), pruned, pending);
    if (!take_place()) return;

    // The variants are claimed in batches (leases, db/lease_store.cpp): other daemons on the same
    // database take the rest. Once nothing is left to claim, the variants other daemons hold are
    // waited for: their leases end in an outcome or expire, and an expired one is claimed here.
    bool finished = false;
    for (;;) {
      const NextVariant next = claimed_in_batches();
      if (job_.mode == JobMode::compile)
        finished = run_compile_only(next);
      else if (job_.pipeline == Pipeline::serial)
        finished = run_serial(next);
      else
        finished = run_pipelined(next, 2 * ctx_.compile_pool.size());
      if (!finished) return;
      const Wait wait = wait_for_other_daemons();
      if (wait == Wait::interrupted) return;
      if (wait == Wait::over) break;
    }
    if (!finished) return;
    publish_timing();
    if (job_.mode == JobMode::tune) {
      if (interrupted()) return finish_interrupted();
      final_comparison();
    }
    ctx_.store.set_job_status(job_.id, JobStatus::done);
    const auto progress = ctx_.store.progress(job_.id);
    spdlog::info("job {}: done, {} variants finished", job_.id, progress.finished);
  }

 private:
  using NextVariant = std::function<std::optional<VariantRecord>()>;

  // The job's planned variants that no daemon holds, claimed for this one a batch at a time.
  NextVariant claimed_in_batches() {
    const int batch = static_cast<int>(std::max<std::size_t>(
        2, 2 * std::max<std::size_t>(ctx_.compile_pool.size(), ctx_.ordinals.size())));
    return [this, batch,
            claimed = std::deque<VariantRecord>()]() mutable -> std::optional<VariantRecord> {
      if (claimed.empty() && !interrupted())
        for (VariantRecord& v : ctx_.store.claim_variants(job_.id, batch))
          claimed.push_back(std::move(v));
      if (claimed.empty()) return std::nullopt;
      VariantRecord next = std::move(claimed.front());
      claimed.pop_front();
      return next;
    };
  }

  // Nothing left to claim: while other daemons hold some of the job's variants, waits for them
  // (polling at the heartbeat) until some became claimable again (released, or an expired
  // lease), none is pending (the sweep is over), or the job was interrupted (and left paused or
  // cancelled by finish_interrupted).
  enum class Wait { claimable, over, interrupted };
  Wait wait_for_other_daemons() {
    bool told = false;
    for (;;) {
      // A cancel (or shutdown) stops the claims: nothing more is claimable for this daemon.
      if (interrupted()) {
        finish_interrupted();
        return Wait::interrupted;
      }
      const auto progress = ctx_.store.progress(job_.id);
      const auto pending = progress.by_status.find("pending");
      if (pending == progress.by_status.end() || pending->second == 0) return Wait::over;
      const std::int64_t elsewhere = ctx_.store.leased_elsewhere(job_.id);
      if (elsewhere < pending->second) return Wait::claimable;  // released or expired
      if (!told) {
        spdlog::info("job {}: {} variants run on other daemons; waiting for their outcomes",
                     job_.id, elsewhere);
        told = true;
      }
      const auto until = std::chrono::steady_clock::now() + ctx_.options.heartbeat;
      while (std::chrono::steady_clock::now() < until) {
        if (interrupted()) {
          finish_interrupted();
          return Wait::interrupted;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ctx_.store.expire_leases();
    }
  }

  // A searched job (engine/job_search.hpp): the searcher hands out batches while the pipeline
  // runs; everything after the sweep is as for a planned job.
  void run_searched() {
    JobPlan plan =
        plan_job(family_, job_, limits_, /*whole_space=*/true, [this] { return interrupted(); });
    if (plan.stopped) return finish_interrupted();
    std::vector<VariantRecord> candidates, fixed;
    for (VariantRecord& row : plan.rows)
      (row.status == VariantStatus::pending ? candidates : fixed).push_back(std::move(row));
    ctx_.store.plan_variants(job_.id, fixed, plan.pruned);
    const std::size_t batch = search_batch_size(ctx_.ordinals.size());
    spdlog::info("job {}: {} {} {} on {}: {} search over {} candidates (budget {}, batch {})",
                 job_.id, family_.name, job_.shape_key, job_.dtype, limits_.arch, job_.search,
                 candidates.size(), job_.budget, batch);
    if (!take_place()) return;
    SearchFeed feed(ctx_.store, job_, std::move(candidates), batch, &family_, limits_);
    // Each pick is claimed before it runs: one another daemon holds (or finished) is skipped.
    const bool finished = run_pipelined(
        [&]() -> std::optional<VariantRecord> {
          while (auto pick = feed.next(base_wall_seconds_ + timeline_.wall_seconds()))
            if (ctx_.store.claim_variant(pick->id)) return pick;
          return std::nullopt;
        },
        batch);
    if (!finished) return;
    spdlog::info("job {}: {} search stopped: {}", job_.id, job_.search, to_string(feed.stopped()));
    publish_timing();
    if (interrupted()) return finish_interrupted();
    final_comparison();
    ctx_.store.set_job_status(job_.id, JobStatus::done);
  }

  // Compile tasks on the pool, up to `lookahead` ahead of the consumer; false once `next` has
  // nothing more to give.
  bool fill(CompileQueue& compiling, const NextVariant& next, std::size_t lookahead, bool timed) {
    while (compiling.size() < lookahead) {
      std::optional<VariantRecord> next_variant = next();
      if (!next_variant) return false;
      VariantRecord variant = std::move(*next_variant);
      compiling.push_back(ctx_.compile_pool.submit([this, variant, timed] {
        const auto start = JobTimeline::Clock::now();
        CompiledVariant cv = compile(variant);
        if (timed) timeline_.record(start, JobTimeline::Clock::now());
        return cv;
      }));
    }
    return true;
  }

  bool run_compile_only(const NextVariant& next) {
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

  // Compiles run ahead on every core; each compiled variant goes to whichever GPU of the job's
  // model is free next. At most two variants per GPU wait compiled, so a cancel drops little.
  bool run_pipelined(const NextVariant& next, std::size_t lookahead) {
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

  // One variant at a time on the job's own GPU: compile it here, measure it, then the next.
  bool run_serial(const NextVariant& next) {
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

  void post_measure(CompiledVariant cv, std::optional<int> pinned) {
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

  // The baseline on one GPU: its median (0 when unknown) and whether speedups rest on it.
  struct BaselineOnGpu {
    double us = 0;
    bool speedup_base = false;
  };

  // The family's baseline (cublasLt at its best for GEMM), timed once on every GPU the job uses,
  // in that GPU's own lane before its first variant: a variant's first-pass speedup is over the
  // baseline of the GPU that measured it. Runs on the GPU's lane thread. A baseline that fails
  // (every candidate computed a wrong result, or it could not run) is a finding, not a failed job:
  // it is recorded with the reason and the job goes on against the reference alone. Throws only
  // when a kernel reference, timed for the watchdog, cannot run (no variant could be checked).
  BaselineOnGpu baseline_on(WorkerClient& worker, const DeviceInfo& device,
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
      const std::string why =
          answer ? *answer->validation_failed
                 : "timing the baseline on GPU " + std::to_string(device.ordinal) +
                       " failed: " + reason;
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

  BaselineOnGpu baseline_failed(const DeviceInfo& device, const std::string& why,
                                const std::optional<BaselineTiming>& answer) {
    spdlog::warn("job {}: baseline_failed on GPU {}: {}; the job goes on against the reference "
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

  // Whether speedups and the final comparison may rest on the baseline: it has one that did not
  // fail on any GPU, in this run or (a resumed job) an earlier one.
  bool baseline_usable() const {
    return has_speedup_baseline(family_) && !baseline_failure_ && !job_baseline_failure(job_);
  }

  // The job's result: its fastest few variants and the baseline re-measured interleaved on one
  // GPU (same buffers' shapes, same flush, same method), the speedup of each with its interval.
  // A failure here costs the comparison, not the job; the first-pass figures stay.
  void final_comparison() {
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
            result.distinguishable ? "" : "not ", result.runner_up_variant_id,
            100.0 * result.margin);
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

  // A tune job with no variant to compare (nothing survived the constraints, or every variant
  // failed before a GPU lane ran) still times the baseline once, on its own problem, so the job
  // ends with the baseline as its answer (/v1/best) instead of nothing. Nothing to do when a lane
  // already timed it (this run, or a run before a restart). A failure costs the answer only.
  void time_baseline_alone() {
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
      ctx_.gpus->post(job_.id,
                      [this, done, problem](WorkerClient& worker, const DeviceInfo& device) {
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
      spdlog::warn("job {}: no variant to compare, and timing the baseline alone failed: {}",
                   job_.id, e.what());
    }
  }

  // A library baseline chose its algorithm by timing in the job's first pass; the final
  // comparison runs that same algorithm (from this run, or from the stored baselines of a resumed
  // job), so the job is compared with one baseline throughout.
  void keep_baseline_choice(ProblemInstance& problem) {
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
    for (const char* key : {"algorithm_index", "gate_algorithm_index", "up_algorithm_index"})
      if (choice.contains(key)) problem.baseline->params[key] = choice[key];
  }

  // Gates 1-2 for one variant, recorded as they come back (on the compile pool's threads).
  CompiledVariant compile(const VariantRecord& variant) {
    try {
      // The variant's work begins here, not at its claim: from now on an expiry of its lease
      // (this daemon dying) counts toward the fault rule (db/lease_store.cpp).
      ctx_.store.begin_variant_work(variant.id);
    } catch (const LeaseLost& lost) {
      CompiledVariant dropped;
      dropped.variant_id = variant.id;
      return lease_lost(std::move(dropped), lost);
    }
    CompiledVariant cv =
        compile_variant(cached_kernel(), compiler(), family_, job_, variant, limits_);
    try {
      record_compiled(ctx_.store, cv);
    } catch (const LeaseLost& lost) {
      return lease_lost(std::move(cv), lost);
    }
    if (cv.failure) changed();
    attach_reference(cv);
    if (ctx_.metrics) {
      if (cv.compile && !cv.cache_hit) ctx_.metrics->compiled(cv.compile->compile_ms / 1000.0);
      if (cv.compile && cv.cache_hit) ctx_.metrics->compile_cache_hit();
      if (cv.failure) ctx_.metrics->variant_ended(cv.failure->status);
      if (cv.failure && cv.failure->failed_gate == "compile" &&
          (cv.failure->status == VariantStatus::crashed ||
           cv.failure->status == VariantStatus::hang))
        ctx_.metrics->compile_process_lost();
    }
    return cv;
  }

  // Another daemon owns the variant now (or the job was cancelled): it is not ours to go on.
  CompiledVariant lease_lost(CompiledVariant cv, const LeaseLost& lost) const {
    spdlog::warn("job {}: {}", job_.id, lost.what());
    VariantOutcome dropped;
    dropped.status = VariantStatus::cancelled;
    dropped.reason = lost.what();
    cv.failure = dropped;
    return cv;
  }

  void attach_reference(CompiledVariant& cv) const {
    if (!reference_cubin_) return;
    attach_reference_kernel(cv.full, *reference_cubin_);
    if (cv.smoke) attach_reference_kernel(*cv.smoke, *reference_cubin_);
  }

  // NVRTC in the calling thread's compile process (engine/compile_client.hpp), never in the
  // daemon: a compiler crash is then the variant's outcome, not the daemon's end.
  KernelCompiler compiler() const {
    return [options = CompileProcessOptions{ctx_.options.worker_exe, ctx_.options.compile_timeout,
                                            ctx_.options.confined_compiles,
                                            ctx_.options.run_as}](
               const CompileRequest& request) { return compile_in_child(options, request); };
  }

  KernelLookup cached_kernel() const {
    return [&store = ctx_.store](const std::string& key) { return store.find_kernel(key); };
  }

  // The family's for the job's dtype. A loaded family has one for every dtype it lists and a job
  // is only accepted for those, so a missing one is an error (FamilyError fails the job), never
  // a silent default.
  const Tolerance& tolerance() const { return tolerance_for(family_, job_.dtype); }

  // For the event streams: the hub reads the job again soon (cheap, no query here).
  void changed() {
    if (ctx_.events) ctx_.events->touch(job_.id);
  }

  // Waits for one of the queue's running places (JobRunContext::take_place), the plan stored;
  // false, the job paused or cancelled, when it was interrupted meanwhile.
  bool take_place() {
    if (!ctx_.take_place) return true;
    bool told = false;
    while (!ctx_.take_place()) {
      if (interrupted()) {
        finish_interrupted();
        return false;
      }
      if (!told) spdlog::info("job {}: planned; waiting for a running job to end", job_.id);
      told = true;
    }
    return true;
  }

  bool interrupted() {
    if (ctx_.stopping && ctx_.stopping()) return true;
    const auto current = ctx_.store.job(job_.id);
    return current && current->cancel_requested;
  }

  void stop_gpu_work() {
    ctx_.gpus->drop_queued(job_.id);
    ctx_.gpus->wait_below(job_.id, 1);
  }

  // Paused for a shutdown (the leases go back at stop), or cancelled: the store closes every
  // pending variant of the job with the cancel, whichever daemon held it.
  void finish_interrupted() {
    publish_timing();
    if (ctx_.stopping && ctx_.stopping()) {
      spdlog::info("job {}: paused for shutdown; it resumes when the daemon restarts", job_.id);
      return;
    }
    ctx_.store.set_job_status(job_.id, JobStatus::cancelled, "cancelled by request");
    spdlog::info("job {}: cancelled", job_.id);
  }

  // Wall and busy time so far, this run added to the earlier runs of a resumed job. Lanes call
  // it concurrently: the lock keeps a later figure from being overwritten by an earlier one.
  void publish_timing() {
    std::lock_guard lock(publish_mutex_);
    if (timeline_.empty()) return;
    std::optional<double> busy;
    if (job_.mode == JobMode::tune) busy = base_busy_seconds_ + timeline_.busy_seconds();
    ctx_.store.set_job_timing(job_.id, base_wall_seconds_ + timeline_.wall_seconds(), busy);
  }

  void note_task_error(const std::string& message) {
    std::lock_guard lock(task_error_mutex_);
    if (!task_error_) task_error_ = message;
  }

  // A GPU task hit an error that is not a variant's fault (the worker refused the request):
  // every later variant would fail the same way, so the job fails.
  void rethrow_task_error() {
    std::lock_guard lock(task_error_mutex_);
    if (task_error_) throw std::runtime_error(*task_error_);
  }

  JobRecord job_;
  const Family& family_;
  DeviceLimits limits_;
  JobRunContext& ctx_;
  JobTimeline timeline_;
  const double base_wall_seconds_;
  const double base_busy_seconds_;
  std::mutex publish_mutex_;
  std::mutex baseline_mutex_;
  std::map<int, double> baseline_us_;              // GPU ordinal -> the baseline's median there
  std::optional<nlohmann::json> baseline_choice_;  // what the first GPU's baseline was
  std::optional<std::string> baseline_failure_;    // why the baseline failed, on any GPU
  std::optional<std::filesystem::path> reference_cubin_;  // a kernel reference, compiled
  std::mutex task_error_mutex_;
  std::optional<std::string> task_error_;
};

void fail(Store& store, std::int64_t job_id, const std::string& reason) {
  spdlog::warn("job {}: failed: {}", job_id, reason);
  store.set_job_status(job_id, JobStatus::failed, reason);
}

}  // namespace

void run_job(std::int64_t job_id, JobRunContext& ctx) {
  try {
    auto job = ctx.store.job(job_id);
    if (!job || job->status == JobStatus::done || job->status == JobStatus::failed ||
        job->status == JobStatus::cancelled)
      return;
    if (job->cancel_requested) {
      ctx.store.set_job_status(job_id, JobStatus::cancelled, "cancelled by request");
      return;
    }
    const Family* family = ctx.families.find(job->family);
    if (family == nullptr)
      return fail(ctx.store, job_id, "family '" + job->family + "' is not loaded");
    JobExecution(*job, *family, ctx.target.limits, ctx).run();
  } catch (const std::exception& e) {
    // A shutdown drops the job's GPU work mid-way; the job stays "running" and resumes.
    if (ctx.stopping && ctx.stopping()) {
      spdlog::info("job {}: interrupted by shutdown ({}); it resumes when the daemon restarts",
                   job_id, e.what());
      return;
    }
    fail(ctx.store, job_id, e.what());
  }
}

}  // namespace kt
