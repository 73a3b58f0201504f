// Rate limit for a log line that can repeat without bound (an accept loop failing with EMFILE
// wrote 390 MB of identical lines in a minute): the first occurrence is reported at once, later
// ones at most once per interval, as a count of what happened since the last report.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace kt {

class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogThrottle(Clock::duration interval) : interval_(interval) {}

  // Counts one occurrence. Returns how many occurrences the caller should report now (this one
  // and those kept silent since the last report), or nothing while the interval has not passed.
  std::optional<std::uint64_t> record(Clock::time_point now = Clock::now());

 private:
  std::mutex mutex_;  // occurrences may come from several I/O threads
  Clock::duration interval_;
  std::optional<Clock::time_point> last_report_;
  std::uint64_t unreported_ = 0;
};

}  // namespace kt
