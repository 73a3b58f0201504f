// LogThrottle: see log_throttle.hpp.
#include "server/log_throttle.hpp"

namespace kt {

std::optional<std::uint64_t> LogThrottle::record(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  ++unreported_;
  if (last_report_ && now - *last_report_ < interval_) return std::nullopt;
  last_report_ = now;
  const std::uint64_t count = unreported_;
  unreported_ = 0;
  return count;
}

}  // namespace kt
