// The measurement pipeline, as named steps: warm up (first-launch costs, clocks, caches), estimate
// and pick events or a CUDA graph (timed_work.hpp), then cold trials, each preceded by an L2
// flush and timed around just the measured work, with an NVML reading of the SM clock and the
// clock-event reasons after each one (throttle_filter.hpp drops samples taken while the GPU was
// held back), until the stop criterion (statistics.hpp) is met on the kept samples ->
// TimingSummary. Works for any launch: a variant's kernel or the cuBLAS reference.
#pragma once

#include <cuda.h>

#include <vector>

#include "tuner/measure_protocol.hpp"
#include "worker/l2_flusher.hpp"
#include "worker/nvml_clock_reader.hpp"
#include "worker/statistics.hpp"
#include "worker/timed_work.hpp"

namespace kt {

// A reading, or an invalid one without NVML.
ClockReading read_clock(const NvmlClockReader* clocks);

class TimingPipeline {
 public:
  // flusher may be null: trials are then warm whatever options.flush_l2 says. clocks may be null
  // (no NVML): nothing is discarded and sm_clock_mhz stays -1.
  TimingPipeline(CUstream stream, cuda::L2Flusher* flusher,
                 const NvmlClockReader* clocks = nullptr);

  TimingSummary run(const LaunchFn& launch, const TimingOptions& options);
  // The samples the last run() summarized (the kept ones), microseconds per launch, trial order.
  const std::vector<double>& samples() const { return samples_; }
  StopReason stop_reason() const { return stop_reason_; }

 private:
  CUstream stream_;
  cuda::L2Flusher* flusher_;
  const NvmlClockReader* clocks_;
  std::vector<double> samples_;
  StopReason stop_reason_ = StopReason::keep_going;
};

}  // namespace kt
