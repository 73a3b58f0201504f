// What the daemon counts for GET /metrics, as it happens, in a prometheus-cpp registry: the
// scheduler counts jobs, the runner counts variant outcomes and compile and measure latencies.
// prometheus-cpp's counters, gauges and histograms are thread-safe and cheap to update, so
// recording costs a few increments and a scrape (collect()) never reads the store. The registry
// lives here, in the engine, because the engine is what counts; the server only serializes it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <prometheus/metric_family.h>

#include "db/model.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/variant_status.hpp"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace kt {

class EngineMetrics {
 public:
  // devices: one busy-time counter each, present (at 0) from the start.
  explicit EngineMetrics(const std::vector<DeviceInfo>& devices);
  ~EngineMetrics();
  EngineMetrics(const EngineMetrics&) = delete;
  EngineMetrics& operator=(const EngineMetrics&) = delete;

  void job_queued();
  void job_started();
  void job_stopped();
  void job_ended(JobStatus status);
  void variant_ended(VariantStatus status, std::int64_t count = 1);
  void compiled(double seconds);
  // A variant's kernel taken from the store's compile cache instead of compiled by NVRTC.
  void compile_cache_hit();
  // A compile process died or was killed on a variant (crashed or hang at gate compile).
  void compile_process_lost();
  void measured(int gpu_ordinal, double seconds);

  // Every family, for a serializer. worker_restarts: the GPU pool's count of workers started
  // again after their first start, read at scrape time and carried into its counter.
  std::vector<prometheus::MetricFamily> collect(std::uint64_t worker_restarts) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* queued_;
  prometheus::Gauge* running_;
  std::map<JobStatus, prometheus::Counter*> jobs_ended_;
  std::map<VariantStatus, prometheus::Counter*> variants_;
  prometheus::Histogram* compile_;
  prometheus::Counter* compile_cache_hits_;
  prometheus::Counter* compile_processes_lost_;
  prometheus::Histogram* measure_;
  prometheus::Counter* worker_restarts_;
  mutable std::mutex restarts_mutex_;  // a scrape turns the pool's total into an increment
  std::map<int, prometheus::Counter*> gpu_busy_;  // built in the constructor, read-only after
};

}  // namespace kt
