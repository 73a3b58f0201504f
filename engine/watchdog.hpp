// How long the daemon waits for a worker's answer before it calls the variant a hang and kills the
// worker. Derived from the job's reference time when it is known: a kernel may be slow, but one
// that runs far longer than the reference (50x, at least 1 ms per launch) on every launch the
// request makes is stuck. Pure, unit-tested.
//
//   per_launch = max(min_per_launch, reference_multiple * reference_us)
//   per_trial  = per_launch + per_trial_overhead     (L2 flush, NVML reads, host wake-up)
//   untimed    = (warmup_runs + 3 estimate trials + 1 graph warm-up + 3 checks) * per_launch
//   timed      = min(max_seconds + per_trial,         the time cap, checked after each trial
//                    2 * max_trials * per_trial)      every trial, thrown-away ones included
//   watchdog   = clamp(allowance + untimed + timed, floor, ceiling)
// allowance pays for what does not scale with the kernel: loading the cubin, allocating and
// filling buffers, the fp32 cuBLAS reference (its first call in a fresh context loads cuBLAS's
// kernels) and comparing the output on the host. Unknown reference (0): the caller's fallback.
#pragma once

#include <chrono>

#include "tuner/interleaved_protocol.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

struct WatchdogRule {
  std::chrono::milliseconds allowance{10000};
  std::chrono::milliseconds min_per_launch{1};
  double reference_multiple = 50;
  std::chrono::milliseconds per_trial_overhead{1};
  std::chrono::milliseconds floor{10000};
  std::chrono::milliseconds ceiling{600000};
};

// The timeout of one measure request; fallback when request.reference_us is unknown (<= 0).
std::chrono::milliseconds measure_watchdog(const MeasureRequest& request,
                                           std::chrono::milliseconds fallback,
                                           const WatchdogRule& rule = {});

// The timeout of an interleaved re-measure (interleaved_measurement.hpp: rounds until each
// candidate converged, at most max_trials rounds and candidates * max_seconds): the allowance
// once, untimed launches per candidate, every candidate's timed share. Uses the largest
// reference_us of the candidates (one job, one reference); unknown: fallback per candidate.
std::chrono::milliseconds interleaved_watchdog(const InterleavedRequest& request,
                                               std::chrono::milliseconds fallback_per_candidate,
                                               const WatchdogRule& rule = {});

}  // namespace kt
