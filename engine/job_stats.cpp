#include "engine/job_stats.hpp"

#include <algorithm>
#include <numeric>

namespace kt {
namespace {

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::int64_t count_of(const JobProgress& progress, const char* status) {
  const auto it = progress.by_status.find(status);
  return it == progress.by_status.end() ? 0 : it->second;
}

}  // namespace

std::optional<double> median_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

JobStats compute_job_stats(const JobStatsInput& input) {
  JobStats stats;
  stats.wall_seconds = input.wall_seconds;
  // Pruned and unsupported variants never reached a gate; cancelled ones never will.
  stats.variants_finished = input.progress.finished - count_of(input.progress, "pruned") -
                            count_of(input.progress, "unsupported_arch") -
                            count_of(input.progress, "cancelled");
  stats.variants_finished = std::max<std::int64_t>(stats.variants_finished, 0);
  stats.variants_measured = count_of(input.progress, "measured");
  if (input.wall_seconds && *input.wall_seconds > 0)
    stats.variants_per_minute =
        static_cast<double>(stats.variants_finished) * 60.0 / *input.wall_seconds;

  stats.compiled = static_cast<std::int64_t>(input.compile_ms.size());
  if (const auto median_ms = median_of(input.compile_ms)) {
    stats.compile_seconds_median = *median_ms / 1000.0;
    stats.compile_seconds_total =
        std::accumulate(input.compile_ms.begin(), input.compile_ms.end(), 0.0) / 1000.0;
  }

  if (input.gpus > 0) {
    stats.gpu_busy_seconds = input.gpu_busy_seconds;
    if (input.gpu_busy_seconds && input.wall_seconds && *input.wall_seconds > 0) {
      const double capacity = *input.wall_seconds * input.gpus;
      stats.gpu_idle_fraction = std::clamp(1.0 - *input.gpu_busy_seconds / capacity, 0.0, 1.0);
    }
  }
  return stats;
}

nlohmann::json to_json(const JobStats& stats) {
  return {
      {"wall_seconds", number_or_null(stats.wall_seconds)},
      {"variants_finished", stats.variants_finished},
      {"variants_measured", stats.variants_measured},
      {"variants_per_minute", number_or_null(stats.variants_per_minute)},
      {"compile_seconds_median", number_or_null(stats.compile_seconds_median)},
      {"compile_seconds_total", number_or_null(stats.compile_seconds_total)},
      {"compiled", stats.compiled},
      {"gpu_busy_seconds", number_or_null(stats.gpu_busy_seconds)},
      {"gpu_idle_fraction", number_or_null(stats.gpu_idle_fraction)},
  };
}

void JobTimeline::record(Clock::time_point start, Clock::time_point end) {
  if (end < start) std::swap(start, end);
  std::lock_guard lock(mutex_);
  if (!first_start_ || start < *first_start_) first_start_ = start;
  if (!last_end_ || end > *last_end_) last_end_ = end;
  busy_seconds_ += std::chrono::duration<double>(end - start).count();
}

void JobTimeline::mark_start(Clock::time_point start) {
  std::lock_guard lock(mutex_);
  if (!first_start_ || start < *first_start_) first_start_ = start;
  if (!last_end_ || start > *last_end_) last_end_ = start;
}

bool JobTimeline::empty() const {
  std::lock_guard lock(mutex_);
  return !first_start_;
}

double JobTimeline::wall_seconds() const {
  std::lock_guard lock(mutex_);
  if (!first_start_) return 0;
  return std::chrono::duration<double>(*last_end_ - *first_start_).count();
}

double JobTimeline::busy_seconds() const {
  std::lock_guard lock(mutex_);
  return busy_seconds_;
}

}  // namespace kt
