// What the daemon counts for GET /metrics, as it happens: the scheduler counts jobs, the runner
// counts variant outcomes and compile and measure latencies. Every figure is an atomic (a
// histogram is a row of them), so recording costs a few increments and a scrape never reads the
// store.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "db/model.hpp"
#include "tuner/variant_status.hpp"

namespace kt {

class LatencyHistogram {
 public:
  // Upper bounds in seconds, ascending; a +Inf bucket follows the last.
  explicit LatencyHistogram(std::vector<double> bounds);
  void observe(double seconds);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf (= count)
    std::uint64_t count = 0;
    double sum = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<std::uint64_t>> buckets_;  // per bound, then +Inf; not cumulative
  std::atomic<std::uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

inline constexpr std::size_t kVariantStatusCount =
    static_cast<std::size_t>(VariantStatus::cancelled) + 1;
inline constexpr std::size_t kJobStatusCount = static_cast<std::size_t>(JobStatus::cancelled) + 1;

class EngineMetrics {
 public:
  EngineMetrics();

  void job_queued() { ++queued_; }
  void job_started() {
    --queued_;
    ++running_;
  }
  void job_stopped() { --running_; }
  void job_ended(JobStatus status) { ++jobs_ended_[static_cast<std::size_t>(status)]; }
  void variant_ended(VariantStatus status) { ++variants_[static_cast<std::size_t>(status)]; }
  void compiled(double seconds) { compile_.observe(seconds); }
  void measured(int gpu_ordinal, double seconds);

  std::int64_t queued() const { return queued_; }
  std::int64_t running() const { return running_; }
  std::uint64_t jobs_ended(JobStatus status) const {
    return jobs_ended_[static_cast<std::size_t>(status)];
  }
  std::uint64_t variants_ended(VariantStatus status) const {
    return variants_[static_cast<std::size_t>(status)];
  }
  LatencyHistogram::Snapshot compile_seconds() const { return compile_.snapshot(); }
  LatencyHistogram::Snapshot measure_seconds() const { return measure_.snapshot(); }
  // GPU ordinal -> seconds its worker spent measuring.
  std::map<int, double> gpu_busy_seconds() const;

 private:
  std::atomic<std::int64_t> queued_{0};
  std::atomic<std::int64_t> running_{0};
  std::array<std::atomic<std::uint64_t>, kJobStatusCount> jobs_ended_{};
  std::array<std::atomic<std::uint64_t>, kVariantStatusCount> variants_{};
  LatencyHistogram compile_;
  LatencyHistogram measure_;
  mutable std::mutex gpu_mutex_;  // a map entry per GPU, added once; held for an addition
  std::map<int, double> gpu_busy_;
};

}  // namespace kt
