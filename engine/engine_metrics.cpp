#include "engine/engine_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace kt {

EngineMetrics::EngineMetrics(const std::vector<DeviceInfo>& devices)
    : registry_(std::make_shared<prometheus::Registry>()) {
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  using prometheus::BuildHistogram;
  queued_ = &BuildGauge()
                 .Name("kerntune_jobs_queued")
                 .Help("Jobs waiting for a runner (the queue depth).")
                 .Register(*registry_)
                 .Add({});
  running_ = &BuildGauge()
                  .Name("kerntune_jobs_running")
                  .Help("Jobs a runner is working on.")
                  .Register(*registry_)
                  .Add({});
  auto& jobs = BuildCounter()
                   .Name("kerntune_jobs_ended_total")
                   .Help("Jobs that ended since the daemon started, by final status.")
                   .Register(*registry_);
  for (const JobStatus status : {JobStatus::done, JobStatus::failed, JobStatus::cancelled})
    jobs_ended_[status] = &jobs.Add({{"status", std::string(to_string(status))}});
  auto& variants =
      BuildCounter()
          .Name("kerntune_variants_total")
          .Help(
              "Variants that went through the gates since the daemon started, by outcome; "
              "cancelled: left unrun when their job was cancelled.")
          .Register(*registry_);
  for (int i = 0; i <= static_cast<int>(VariantStatus::cancelled); ++i) {
    const auto status = static_cast<VariantStatus>(i);
    if (status == VariantStatus::pending || status == VariantStatus::pruned ||
        status == VariantStatus::unsupported_arch)
      continue;  // planned, never through a gate: counted per job in the store
    variants_[status] = &variants.Add({{"outcome", std::string(to_string(status))}});
  }
  // Compiles take 0.1 s to a minute (NVRTC on a wgmma kernel); measurements 10 ms (a failed smoke
  // run) to minutes (a slow shape with many trials).
  compile_ = &BuildHistogram()
                  .Name("kerntune_compile_seconds")
                  .Help("NVRTC compile time per variant (cache misses).")
                  .Register(*registry_)
                  .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 0.25, 0.5, 1, 2, 4, 8, 16,
                                                                   32, 64});
  // The cache is the store's kernels table, keyed by content: on a shared PostgreSQL a hit is a
  // kernel another daemon compiled as often as one this daemon did.
  compile_cache_hits_ = &BuildCounter()
                             .Name("kerntune_compile_cache_hits_total")
                             .Help(
                                 "Variants whose kernel was fetched from the store's compile "
                                 "cache instead of compiled by NVRTC.")
                             .Register(*registry_)
                             .Add({});
  compile_processes_lost_ =
      &BuildCounter()
           .Name("kerntune_compile_process_restarts_total")
           .Help(
               "Compile processes (NVRTC) that died or ran past the compile timeout on a variant; "
               "a fresh one takes the next.")
           .Register(*registry_)
           .Add({});
  measure_ = &BuildHistogram()
                  .Name("kerntune_measure_seconds")
                  .Help("Worker time per measured variant (load, checks, timing).")
                  .Register(*registry_)
                  .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2,
                                                                   5, 10, 30, 60, 120});
  worker_restarts_ =
      &BuildCounter()
           .Name("kerntune_worker_restarts_total")
           .Help("Measurement workers started again after a crash, hang or illegal access.")
           .Register(*registry_)
           .Add({});
  auto& busy = BuildCounter()
                   .Name("kerntune_gpu_busy_seconds_total")
                   .Help("Seconds each GPU's worker spent measuring variants.")
                   .Register(*registry_);
  for (const DeviceInfo& device : devices)
    gpu_busy_[device.ordinal] =
        &busy.Add({{"gpu", std::to_string(device.ordinal)}, {"uuid", device.uuid}});
}

EngineMetrics::~EngineMetrics() = default;

void EngineMetrics::job_queued() {
  queued_->Increment();
}

void EngineMetrics::job_started() {
  queued_->Decrement();
  running_->Increment();
}

void EngineMetrics::job_stopped() {
  running_->Decrement();
}

void EngineMetrics::job_ended(JobStatus status) {
  const auto it = jobs_ended_.find(status);
  if (it != jobs_ended_.end()) it->second->Increment();
}

void EngineMetrics::variant_ended(VariantStatus status, std::int64_t count) {
  const auto it = variants_.find(status);
  if (it != variants_.end() && count > 0) it->second->Increment(static_cast<double>(count));
}

void EngineMetrics::compiled(double seconds) {
  compile_->Observe(seconds);
}

void EngineMetrics::compile_cache_hit() {
  compile_cache_hits_->Increment();
}

void EngineMetrics::compile_process_lost() {
  compile_processes_lost_->Increment();
}

void EngineMetrics::measured(int gpu_ordinal, double seconds) {
  measure_->Observe(seconds);
  const auto it = gpu_busy_.find(gpu_ordinal);
  if (it != gpu_busy_.end()) it->second->Increment(seconds);
}

std::vector<prometheus::MetricFamily> EngineMetrics::collect(std::uint64_t worker_restarts) const {
  {
    std::lock_guard lock(restarts_mutex_);
    const double seen = worker_restarts_->Value();
    if (static_cast<double>(worker_restarts) > seen)
      worker_restarts_->Increment(static_cast<double>(worker_restarts) - seen);
  }
  return registry_->Collect();
}

}  // namespace kt
