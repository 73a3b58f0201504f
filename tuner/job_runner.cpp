#include "tuner/job_runner.hpp"

#include <deque>
#include <fstream>
#include <future>

#include <spdlog/spdlog.h>

#include "tuner/job_compile.hpp"
#include "tuner/job_plan.hpp"

namespace kt {
namespace {

// Writes the cubin where the worker can read it; content-addressed, so an existing file is it.
std::filesystem::path materialize_cubin(const std::filesystem::path& dir,
                                        const CompiledVariant& cv) {
  std::filesystem::create_directories(dir);
  const auto path = dir / (cv.kernel_key + ".cubin");
  if (std::filesystem::exists(path)) return path;
  const auto partial = dir / (cv.kernel_key + ".cubin.partial");
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(cv.cubin.data(), static_cast<std::streamsize>(cv.cubin.size()));
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, path);
  return path;
}

std::chrono::milliseconds watchdog(const SchedulerOptions& options) {
  const auto timing_ms = static_cast<long long>(options.timing.max_seconds * 3000.0);
  return options.min_watchdog + std::chrono::milliseconds(timing_ms);
}

std::uint64_t mix_seed(std::uint64_t seed, std::int64_t variant_id) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(variant_id) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return (x ^ (x >> 29)) | 1;
}

VariantOutcome outcome_of(const MeasureResult& result, const ProblemInstance& problem,
                          std::optional<double> reference_us) {
  VariantOutcome outcome;
  outcome.status = result.status;
  outcome.failed_gate = result.failed_gate;
  outcome.reason = result.reason;
  outcome.error = result.error;
  outcome.timing = result.timing;
  if (result.status == VariantStatus::measured && result.timing && result.timing->median_us > 0) {
    const double seconds = result.timing->median_us * 1e-6;
    outcome.tflops = problem.flops / seconds / 1e12;
    outcome.gbps = problem.bytes / seconds / 1e9;
    if (reference_us) outcome.speedup = *reference_us / result.timing->median_us;
  }
  return outcome;
}

class JobExecution {
 public:
  JobExecution(JobRecord job, const Family& family, DeviceLimits limits, JobRunContext& ctx)
      : job_(std::move(job)), family_(family), limits_(std::move(limits)), ctx_(ctx) {}

  void run() {
    ctx_.store.set_job_status(job_.id, JobStatus::running);
    const auto rows = ctx_.store.plan_variants(job_.id, plan_job(family_, job_, limits_));
    std::vector<VariantRecord> pending;
    for (const auto& row : rows)
      if (row.status == VariantStatus::pending) pending.push_back(row);
    spdlog::info("job {}: {} {} {} on {}: {} variants planned, {} to run", job_.id, family_.name,
                 job_.shape_key, job_.dtype, limits_.arch, rows.size(), pending.size());

    const std::size_t lookahead = 2 * ctx_.compile_pool.size();
    std::deque<std::future<CompiledVariant>> compiling;
    // Compile tasks refer to this object: never leave (even by exception) while one is in flight.
    struct DrainOnExit {
      std::deque<std::future<CompiledVariant>>& queue;
      ~DrainOnExit() { drain(queue); }
    } drain_on_exit{compiling};
    std::size_t next = 0;
    while (next < pending.size() || !compiling.empty()) {
      while (next < pending.size() && compiling.size() < lookahead) {
        const VariantRecord& variant = pending[next++];
        compiling.push_back(ctx_.compile_pool.submit([this, variant] {
          return compile_variant(ctx_.store, family_, job_, variant, limits_);
        }));
      }
      CompiledVariant cv = compiling.front().get();
      compiling.pop_front();
      if (interrupted()) {
        drain(compiling);
        finish_interrupted(pending);
        return;
      }
      if (!cv.failure) gate_variant(cv);
    }
    ctx_.store.set_job_status(job_.id, JobStatus::done);
    const auto progress = ctx_.store.progress(job_.id);
    spdlog::info("job {}: done, {} variants finished", job_.id, progress.finished);
  }

 private:
  bool interrupted() {
    if (ctx_.stopping && ctx_.stopping()) return true;
    const auto current = ctx_.store.job(job_.id);
    return current && current->cancel_requested;
  }

  static void drain(std::deque<std::future<CompiledVariant>>& compiling) {
    for (auto& future : compiling) future.wait();
    compiling.clear();
  }

  void finish_interrupted(const std::vector<VariantRecord>& pending) {
    if (ctx_.stopping && ctx_.stopping()) {
      spdlog::info("job {}: paused for shutdown; it resumes when the daemon restarts", job_.id);
      return;
    }
    for (const auto& variant : pending) {
      const auto current = ctx_.store.variant(variant.id);
      if (current && current->status == VariantStatus::pending) {
        VariantOutcome outcome;
        outcome.status = VariantStatus::cancelled;
        outcome.reason = "job cancelled";
        ctx_.store.record_outcome(variant.id, outcome);
      }
    }
    ctx_.store.set_job_status(job_.id, JobStatus::cancelled, "cancelled by request");
    spdlog::info("job {}: cancelled", job_.id);
  }

  void gate_variant(const CompiledVariant& cv) {
    if (job_.mode == "compile") {
      VariantOutcome outcome;
      outcome.status = VariantStatus::compiled;
      ctx_.store.record_outcome(cv.variant_id, outcome);
      return;
    }
    if (!ensure_reference(cv)) return;
    MeasureRequest request;
    request.variant_id = cv.variant_id;
    request.cubin_path = materialize_cubin(ctx_.options.work_dir, cv).string();
    request.kernel = cv.kernel;
    request.smoke = cv.smoke;
    request.full = cv.full;
    request.tolerance = tolerance();
    request.seed = mix_seed(ctx_.seed, cv.variant_id);
    request.timing = ctx_.options.timing;
    const MeasureResult result = ctx_.worker->measure(request, watchdog(ctx_.options));
    const int smem = result.static_smem_bytes >= 0
                         ? result.static_smem_bytes + static_cast<int>(cv.full.launch.dynamic_smem)
                         : -1;
    ctx_.store.record_loaded_resources(cv.variant_id, result.registers, smem);
    const VariantOutcome outcome = outcome_of(result, cv.full, job_.reference_us);
    ctx_.store.record_outcome(cv.variant_id, outcome);
    if (outcome.status == VariantStatus::measured)
      spdlog::info("job {}: variant {} measured: {:.1f} us ({:.1f} TFLOP/s)", job_.id,
                   cv.variant_id, outcome.timing->median_us, outcome.tflops);
    else
      spdlog::info("job {}: variant {} {}: {}", job_.id, cv.variant_id, to_string(outcome.status),
                   outcome.reason);
  }

  double tolerance() const {
    const auto it = family_.tolerance.find(job_.dtype);
    return it == family_.tolerance.end() ? 1e-2 : it->second;
  }

  // The family's reference (cuBLAS for GEMM) timed once per job on the same GPU, so every
  // result carries a speedup measured in the same run.
  bool ensure_reference(const CompiledVariant& cv) {
    if (job_.reference_us) return true;
    ReferenceTimingRequest request;
    request.problem = cv.full;
    request.seed = mix_seed(ctx_.seed, 0);
    request.timing = ctx_.options.timing;
    std::string reason;
    const auto timing = ctx_.worker->time_reference(request, watchdog(ctx_.options), &reason);
    if (!timing) {
      throw std::runtime_error("timing the reference (" + family_.reference.kind +
                               ") failed: " + reason);
    }
    job_.reference_us = timing->median_us;
    ctx_.store.set_job_reference(job_.id, timing->median_us);
    spdlog::info("job {}: reference {} {:.1f} us", job_.id, family_.reference.kind,
                 timing->median_us);
    return true;
  }

  JobRecord job_;
  const Family& family_;
  DeviceLimits limits_;
  JobRunContext& ctx_;
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

    std::optional<DeviceLimits> limits;
    if (job->mode == "compile") {
      limits = limits_for_arch(job->arch);
      if (!limits) return fail(ctx.store, job_id, "unknown arch '" + job->arch + "'");
    } else {
      if (ctx.device == nullptr || ctx.worker == nullptr)
        return fail(ctx.store, job_id, "device " + job->device_uuid + " is not available");
      limits = limits_for_device(*ctx.device);
    }
    JobExecution(*job, *family, *limits, ctx).run();
  } catch (const std::exception& e) {
    fail(ctx.store, job_id, e.what());
  }
}

}  // namespace kt
