#include "tuner/clock_events.hpp"

#include <utility>

namespace kt {

std::vector<std::string> clock_event_names(std::uint64_t reasons) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {clock_event::gpu_idle, "gpu_idle"},
      {clock_event::applications_clocks, "applications_clocks"},
      {clock_event::sw_power_cap, "sw_power_cap"},
      {clock_event::hw_slowdown, "hw_slowdown"},
      {clock_event::sync_boost, "sync_boost"},
      {clock_event::sw_thermal, "sw_thermal"},
      {clock_event::hw_thermal, "hw_thermal"},
      {clock_event::hw_power_brake, "hw_power_brake"},
      {clock_event::display_clocks, "display_clocks"},
  };
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) names.emplace_back(name);
  }
  for (int bit = 0; bit < 64; ++bit)
    if ((reasons & ~known) & (std::uint64_t{1} << bit))
      names.push_back("bit_" + std::to_string(bit));
  return names;
}

}  // namespace kt
