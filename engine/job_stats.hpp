// The engine's own figures for a job (the "stats" of GET /v1/jobs/{id}): how fast it went through
// its variants, how long NVRTC took per variant, and how much of the time its GPUs were busy.
//
//   wall_seconds      from the start of the sweep (its first compile) to the last result,
//                     summed over the runs of a resumed job
//   gpu_busy_seconds  time the workers spent inside measure calls for the job's variants
//   gpu_idle_fraction 1 - gpu_busy_seconds / (wall_seconds * gpus)
//   variants_per_minute  variants that went through the gates (not pruned, not cancelled) per
//                     minute of wall time
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/model.hpp"

namespace kt {

struct JobStatsInput {
  std::optional<double> wall_seconds;
  std::optional<double> gpu_busy_seconds;
  int gpus = 0;  // GPUs the job could use (0: compile-only)
  JobProgress progress;
  std::vector<double> compile_ms;  // NVRTC time of each variant this job compiled (not cache hits)
};

struct JobStats {
  std::optional<double> wall_seconds;
  std::int64_t variants_finished = 0;  // through the gates: not pending, pruned or cancelled
  std::int64_t variants_measured = 0;
  std::optional<double> variants_per_minute;
  std::optional<double> compile_seconds_median;
  std::optional<double> compile_seconds_total;
  std::int64_t compiled = 0;  // variants NVRTC compiled for this job
  std::optional<double> gpu_busy_seconds;
  std::optional<double> gpu_idle_fraction;  // clamped to [0, 1]
};

JobStats compute_job_stats(const JobStatsInput& input);
// Unknown values are null.
nlohmann::json to_json(const JobStats& stats);

// The median of the values (mean of the middle two for an even count); nullopt when empty.
std::optional<double> median_of(std::vector<double> values);

// Collects one run of a job's timeline from the threads that do its work: each finished step
// (a measure call, or a compile for a compile-only job) reports when it started and ended. Wall
// time spans the earliest start to the latest end; busy time is the sum of the steps.
class JobTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  void record(Clock::time_point start, Clock::time_point end);
  // The sweep began (its first compile): the wall time runs from here even though no measure
  // call has started yet, so a pipelined sweep is charged for the compiles it waits on.
  void mark_start(Clock::time_point start);
  bool empty() const;
  double wall_seconds() const;  // 0 when empty
  double busy_seconds() const;

 private:
  mutable std::mutex mutex_;
  std::optional<Clock::time_point> first_start_;
  std::optional<Clock::time_point> last_end_;
  double busy_seconds_ = 0;
};

}  // namespace kt
