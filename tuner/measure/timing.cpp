#include "tuner/measure/timing.hpp"

#include <algorithm>
#include <chrono>

#include "tuner/measure/driver_api.hpp"

namespace kt {

TimingPipeline::TimingPipeline(CUstream stream, cuda::L2Flusher* flusher)
    : stream_(stream), flusher_(flusher) {}

TimingSummary TimingPipeline::run(const LaunchFn& launch, const TimingOptions& options) {
  warm_up(launch, options.warmup_runs);
  const StopCriterion criterion(stop_rule_from(options));
  samples_.clear();
  samples_.reserve(static_cast<std::size_t>(std::max(criterion.rule().max_trials, 1)));
  const auto begin = std::chrono::steady_clock::now();
  do {
    samples_.push_back(timed_trial(launch, options.flush_l2));
    stop_reason_ = criterion.evaluate(samples_, std::chrono::steady_clock::now() - begin);
  } while (stop_reason_ == StopReason::keep_going);
  return summarize(samples_, stop_reason_ == StopReason::converged);
}

void TimingPipeline::warm_up(const LaunchFn& launch, int runs) {
  for (int i = 0; i < runs; ++i) launch(stream_);
  KT_CU(cuStreamSynchronize, stream_);  // a fault in warm-up surfaces here, not in a trial
}

double TimingPipeline::timed_trial(const LaunchFn& launch, bool flush_l2) {
  if (flush_l2 && flusher_ != nullptr) flusher_->flush(stream_);
  start_.record(stream_);
  launch(stream_);
  stop_.record(stream_);
  stop_.synchronize();
  return static_cast<double>(cuda::elapsed_ms(start_, stop_)) * 1000.0;
}

}  // namespace kt
