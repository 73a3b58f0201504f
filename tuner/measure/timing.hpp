// The measurement pipeline, as named steps: warm up (first-launch costs, clocks, caches), then cold
// trials, each preceded by an L2 flush and timed with CUDA events around just the measured work,
// until the stop criterion (statistics.hpp) is met -> TimingSummary. Works for any launch: a
// variant's kernel or the cuBLAS reference.
#pragma once

#include <cuda.h>

#include <functional>
#include <vector>

#include "tuner/measure/cuda_event.hpp"
#include "tuner/measure/l2_flusher.hpp"
#include "tuner/measure/protocol.hpp"
#include "tuner/measure/statistics.hpp"

namespace kt {

// Enqueues one run of the measured work on the stream. Throws CudaError if it cannot.
using LaunchFn = std::function<void(CUstream)>;

class TimingPipeline {
 public:
  // flusher may be null: trials are then warm whatever options.flush_l2 says.
  TimingPipeline(CUstream stream, cuda::L2Flusher* flusher);

  TimingSummary run(const LaunchFn& launch, const TimingOptions& options);
  // The samples of the last run(), in microseconds, in trial order.
  const std::vector<double>& samples() const { return samples_; }
  StopReason stop_reason() const { return stop_reason_; }

 private:
  void warm_up(const LaunchFn& launch, int runs);
  // One trial: optional L2 flush, then start event, launch, stop event; microseconds.
  double timed_trial(const LaunchFn& launch, bool flush_l2);

  CUstream stream_;
  cuda::L2Flusher* flusher_;
  cuda::Event start_;
  cuda::Event stop_;
  std::vector<double> samples_;
  StopReason stop_reason_ = StopReason::keep_going;
};

}  // namespace kt
