// JobExecution's shared core (engine/job_execution.hpp): running the job through its pipeline,
// claiming its variants, compiling and recording them, events, interruption and timing.
#include "engine/job_execution.hpp"

#include <algorithm>
#include <deque>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "engine/compile_client.hpp"
#include "engine/job_plan.hpp"
#include "engine/job_recorder.hpp"
#include "engine/job_search.hpp"
#include "engine/job_start.hpp"
#include "engine/reference_kernel.hpp"

namespace kt {

void JobExecution::run() {
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
               job_.mode == JobMode::compile ? "compile only"
               : job_.mode == JobMode::check ? "check on a GPU, no answer"
                                             : to_string(job_.pipeline),
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

JobExecution::NextVariant JobExecution::claimed_in_batches() {
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

JobExecution::Wait JobExecution::wait_for_other_daemons() {
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
      spdlog::info("job {}: {} variants run on other daemons; waiting for their outcomes", job_.id,
                   elsewhere);
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

bool JobExecution::fill(CompileQueue& compiling, const NextVariant& next, std::size_t lookahead,
                        bool timed) {
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

CompiledVariant JobExecution::compile(const VariantRecord& variant) {
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
        (cv.failure->status == VariantStatus::crashed || cv.failure->status == VariantStatus::hang))
      ctx_.metrics->compile_process_lost();
  }
  return cv;
}

CompiledVariant JobExecution::lease_lost(CompiledVariant cv, const LeaseLost& lost) const {
  spdlog::warn("job {}: {}", job_.id, lost.what());
  VariantOutcome dropped;
  dropped.status = VariantStatus::cancelled;
  dropped.reason = lost.what();
  cv.failure = dropped;
  return cv;
}

void JobExecution::attach_reference(CompiledVariant& cv) const {
  if (!reference_cubin_) return;
  attach_reference_kernel(cv.full, *reference_cubin_);
  if (cv.smoke) attach_reference_kernel(*cv.smoke, *reference_cubin_);
}

KernelCompiler JobExecution::compiler() const {
  return [options = CompileProcessOptions{ctx_.options.worker_exe, ctx_.options.compile_timeout,
                                          ctx_.options.confined_compiles, ctx_.options.run_as}](
             const CompileRequest& request) { return compile_in_child(options, request); };
}

KernelLookup JobExecution::cached_kernel() const {
  return [&store = ctx_.store](const std::string& key) { return store.find_kernel(key); };
}

bool JobExecution::take_place() {
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

bool JobExecution::interrupted() {
  if (ctx_.stopping && ctx_.stopping()) return true;
  const auto current = ctx_.store.job(job_.id);
  return current && current->cancel_requested;
}

void JobExecution::stop_gpu_work() {
  ctx_.gpus->drop_queued(job_.id);
  ctx_.gpus->wait_below(job_.id, 1);
}

void JobExecution::finish_interrupted() {
  publish_timing();
  if (ctx_.stopping && ctx_.stopping()) {
    spdlog::info("job {}: paused for shutdown; it resumes when the daemon restarts", job_.id);
    return;
  }
  const std::int64_t closed =
      ctx_.store.set_job_status(job_.id, JobStatus::cancelled, "cancelled by request");
  if (ctx_.metrics) ctx_.metrics->variant_ended(VariantStatus::cancelled, closed);
  spdlog::info("job {}: cancelled", job_.id);
}

void JobExecution::publish_timing() {
  std::lock_guard lock(publish_mutex_);
  if (timeline_.empty()) return;
  std::optional<double> busy;
  if (job_.mode != JobMode::compile) busy = base_busy_seconds_ + timeline_.busy_seconds();
  ctx_.store.set_job_timing(job_.id, base_wall_seconds_ + timeline_.wall_seconds(), busy);
}

void JobExecution::note_task_error(const std::string& message) {
  std::lock_guard lock(task_error_mutex_);
  if (!task_error_) task_error_ = message;
}

void JobExecution::rethrow_task_error() {
  std::lock_guard lock(task_error_mutex_);
  if (task_error_) throw std::runtime_error(*task_error_);
}

}  // namespace kt
