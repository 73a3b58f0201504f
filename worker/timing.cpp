#include "worker/timing.hpp"

#include <chrono>

#include "worker/throttle_filter.hpp"

namespace kt {

ClockReading read_clock(const NvmlClockReader* clocks) {
  return clocks != nullptr ? clocks->read() : ClockReading{};
}

TimingPipeline::TimingPipeline(CUstream stream, cuda::L2Flusher* flusher,
                               const NvmlClockReader* clocks)
    : stream_(stream), flusher_(flusher), clocks_(clocks) {}

TimingSummary TimingPipeline::run(const LaunchFn& launch, const TimingOptions& options) {
  TimedWork work(launch, options, stream_, flusher_);
  const StopCriterion criterion(stop_rule_from(options));
  ThrottleFilter filter;
  // Each sample is judged by the readings on both sides of it; one reading serves two samples.
  ClockReading before = read_clock(clocks_);
  const auto begin = std::chrono::steady_clock::now();
  do {
    const double sample_us = work.sample(options.flush_l2);
    const ClockReading after = read_clock(clocks_);
    filter.add(sample_us, before, after);
    before = after;
    stop_reason_ = criterion.evaluate(filter.kept(), filter.attempts(),
                                      std::chrono::steady_clock::now() - begin);
  } while (stop_reason_ == StopReason::keep_going);
  const auto summarized = filter.samples_to_summarize();
  samples_.assign(summarized.begin(), summarized.end());
  TimingSummary summary =
      summarize(samples_, stop_reason_ == StopReason::converged && !filter.kept().empty());
  summary.method = work.method();
  summary.launches_per_sample = work.launches_per_sample();
  filter.annotate(summary);
  return summary;
}

}  // namespace kt
