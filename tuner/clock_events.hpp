// NVML's clock-event ("throttle") reasons as a measurement reports them
// (TimingSummary::throttle_reasons): the bits the worker reads and the names the API shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kt {

// NVML's nvmlClocksEventReason* bits (the same values as the older ThrottleReason names).
namespace clock_event {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clocks = 0x100;
}  // namespace clock_event

// "sw_power_cap", "hw_thermal", ...; unknown bits as "bit_N".
std::vector<std::string> clock_event_names(std::uint64_t reasons);

}  // namespace kt
