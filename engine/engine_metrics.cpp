#include "engine/engine_metrics.hpp"

#include <algorithm>

namespace kt {

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1) {}

void LatencyHistogram::observe(double seconds) {
  const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin();
  ++buckets_[static_cast<std::size_t>(at)];
  ++count_;
  sum_.fetch_add(seconds);
}

LatencyHistogram::Snapshot LatencyHistogram::snapshot() const {
  Snapshot snap;
  snap.bounds = bounds_;
  std::uint64_t running = 0;
  for (const auto& bucket : buckets_) snap.cumulative.push_back(running += bucket.load());
  snap.count = running;  // the buckets' total: consistent with them even mid-observe
  snap.sum = sum_.load();
  return snap;
}

// Compiles take 0.1 s to a minute (NVRTC on a wgmma kernel); measurements 10 ms (a failed smoke
// run) to minutes (a slow shape with many trials).
EngineMetrics::EngineMetrics()
    : compile_({0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}),
      measure_({0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120}) {}

void EngineMetrics::measured(int gpu_ordinal, double seconds) {
  measure_.observe(seconds);
  std::lock_guard lock(gpu_mutex_);
  gpu_busy_[gpu_ordinal] += seconds;
}

std::map<int, double> EngineMetrics::gpu_busy_seconds() const {
  std::lock_guard lock(gpu_mutex_);
  return gpu_busy_;
}

}  // namespace kt
