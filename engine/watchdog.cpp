#include "engine/watchdog.hpp"

#include <algorithm>
#include <cmath>

namespace kt {
namespace {

using Seconds = std::chrono::duration<double>;
using std::chrono::milliseconds;

// Launches outside the timed trials: warm-up, the estimate trials that pick events or a graph,
// the graph's own warm-up launch and the smoke, full and repeat checks.
constexpr int kEstimateTrials = 3;
constexpr int kGraphWarmups = 1;
constexpr int kCheckLaunches = 3;

Seconds per_launch(double reference_us, const WatchdogRule& rule) {
  return std::max(Seconds(rule.min_per_launch),
                  Seconds(rule.reference_multiple * reference_us * 1e-6));
}

Seconds untimed(const TimingOptions& timing, Seconds launch) {
  const int launches =
      std::max(timing.warmup_runs, 0) + kEstimateTrials + kGraphWarmups + kCheckLaunches;
  return launches * launch;
}

Seconds timed(const TimingOptions& timing, Seconds trial, double time_cap_seconds) {
  const Seconds by_time = Seconds(std::max(time_cap_seconds, 0.0)) + trial;
  const Seconds by_count = 2.0 * std::max(timing.max_trials, 1) * trial;
  return std::min(by_time, by_count);
}

milliseconds clamp_to_rule(Seconds total, const WatchdogRule& rule) {
  const auto ms = milliseconds(static_cast<long long>(std::ceil(total.count() * 1000.0)));
  return std::clamp(ms, rule.floor, std::max(rule.floor, rule.ceiling));
}

}  // namespace

milliseconds measure_watchdog(const MeasureRequest& request, milliseconds fallback,
                              const WatchdogRule& rule) {
  if (!(request.reference_us > 0) || !std::isfinite(request.reference_us)) return fallback;
  const Seconds launch = per_launch(request.reference_us, rule);
  const Seconds trial = launch + Seconds(rule.per_trial_overhead);
  Seconds total = Seconds(rule.allowance) + untimed(request.timing, launch);
  if (request.time) total += timed(request.timing, trial, request.timing.max_seconds);
  return clamp_to_rule(total, rule);
}

milliseconds interleaved_watchdog(const InterleavedRequest& request,
                                  milliseconds fallback_per_candidate, const WatchdogRule& rule) {
  // The baseline is one more side of every round; choosing its algorithm takes about as long as
  // warming up and timing a side, so it counts twice.
  const auto n = static_cast<int>(request.candidates.size()) + (request.baseline ? 2 : 0);
  double reference_us = 0;
  for (const MeasureRequest& c : request.candidates) {
    if (!(c.reference_us > 0) || !std::isfinite(c.reference_us)) {
      reference_us = 0;
      break;
    }
    reference_us = std::max(reference_us, c.reference_us);
  }
  if (reference_us == 0) return std::max(n, 1) * fallback_per_candidate;
  const Seconds launch = per_launch(reference_us, rule);
  const Seconds trial = launch + Seconds(rule.per_trial_overhead);
  // One round times every candidate: the time cap is candidates * max_seconds in all.
  const Seconds total = Seconds(rule.allowance) + n * untimed(request.timing, launch) +
                        n * timed(request.timing, trial, request.timing.max_seconds);
  return clamp_to_rule(total, rule);
}

}  // namespace kt
