// Which timing samples to trust, from NVML readings of the SM clock and the clock-event
// ("throttle") reasons taken before and after each sample. A sample during which the GPU was
// held back by power or heat ran at a clock the next sample may not see, so it is dropped and
// counted. Pure: no NVML here (nvml_clock_reader.hpp reads the numbers), unit-tested on made-up
// ones.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tuner/clock_events.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

// The reasons that slow the SM clock below what the kernel gets otherwise: power cap, hardware
// slowdown (incl. power brake), sync boost, software and hardware thermal. Idle, applications-
// clocks and display-clock bits say how clocks are set, not that the GPU is being held back.
inline constexpr std::uint64_t kDistortingClockEvents =
    clock_event::sw_power_cap | clock_event::hw_slowdown | clock_event::sync_boost |
    clock_event::sw_thermal | clock_event::hw_thermal | clock_event::hw_power_brake;

bool distorts_timing(std::uint64_t reasons);

// One NVML reading; valid = false when NVML is absent or the read failed.
struct ClockReading {
  bool valid = false;
  int sm_clock_mhz = -1;
  std::uint64_t reasons = 0;
};

// A sample is kept unless a valid reading on either side of it shows a distorting reason.
bool keep_sample(const ClockReading& before, const ClockReading& after);

// Collects samples with their readings and says what to report.
class ThrottleFilter {
 public:
  // Returns whether the sample is kept.
  bool add(double sample_us, const ClockReading& before, const ClockReading& after);
  void clear();

  const std::vector<double>& kept() const { return kept_; }
  int discarded() const { return static_cast<int>(dropped_.size()); }
  int attempts() const { return static_cast<int>(kept_.size() + dropped_.size()); }
  // What to summarize: the kept samples, or, when every sample was dropped, the dropped ones (the
  // only numbers there are; the summary then has discarded_samples == trials and converged false).
  std::span<const double> samples_to_summarize() const;
  // Sets discarded_samples, sm_clock_mhz (median clock read after the kept samples, else after
  // any sample; -1 if no reading was valid) and throttle_reasons (OR of every valid reading).
  void annotate(TimingSummary& summary) const;

 private:
  std::vector<double> kept_;
  std::vector<double> dropped_;
  std::vector<double> kept_clocks_mhz_;
  std::vector<double> all_clocks_mhz_;
  std::uint64_t reasons_ = 0;
};

}  // namespace kt
