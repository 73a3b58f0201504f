#include "worker/throttle_filter.hpp"

#include <cmath>
#include <utility>

#include "worker/statistics.hpp"

namespace kt {

bool distorts_timing(std::uint64_t reasons) {
  return (reasons & kDistortingClockEvents) != 0;
}

bool keep_sample(const ClockReading& before, const ClockReading& after) {
  for (const ClockReading* r : {&before, &after})
    if (r->valid && distorts_timing(r->reasons)) return false;
  return true;
}

bool ThrottleFilter::add(double sample_us, const ClockReading& before, const ClockReading& after) {
  for (const ClockReading* r : {&before, &after})
    if (r->valid) reasons_ |= r->reasons;
  const bool keep = keep_sample(before, after);
  (keep ? kept_ : dropped_).push_back(sample_us);
  if (after.valid && after.sm_clock_mhz >= 0) {
    all_clocks_mhz_.push_back(after.sm_clock_mhz);
    if (keep) kept_clocks_mhz_.push_back(after.sm_clock_mhz);
  }
  return keep;
}

void ThrottleFilter::clear() {
  *this = ThrottleFilter();
}

std::span<const double> ThrottleFilter::samples_to_summarize() const {
  return kept_.empty() ? std::span<const double>(dropped_) : std::span<const double>(kept_);
}

void ThrottleFilter::annotate(TimingSummary& summary) const {
  summary.discarded_samples = discarded();
  summary.throttle_reasons = reasons_;
  const std::vector<double>& clocks = kept_clocks_mhz_.empty() ? all_clocks_mhz_ : kept_clocks_mhz_;
  summary.sm_clock_mhz = clocks.empty() ? -1 : static_cast<int>(std::lround(median(clocks)));
}

}  // namespace kt
