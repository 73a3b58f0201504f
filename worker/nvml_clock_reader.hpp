// The SM clock and the clock-event ("throttle") reasons of one GPU, read through NVML. NVML is
// loaded at run time (dlopen("libnvidia-ml.so.1")), never linked: CI hosts have no driver, and
// without NVML the worker measures as before, only without clock checks (sm_clock_mhz -1).
#pragma once

#include <memory>
#include <string>

#include "worker/throttle_filter.hpp"

namespace kt {

class NvmlClockReader {
 public:
  // NVML for the GPU with this UUID ("GPU-xxxxxxxx-...", as describe_device gives it), checked
  // by one reading. Null and *why_not set when the library, a function, the device or the first
  // reading is missing; never throws.
  static std::unique_ptr<NvmlClockReader> open(const std::string& uuid, std::string* why_not);
  ~NvmlClockReader();  // nvmlShutdown, then dlclose
  NvmlClockReader(const NvmlClockReader&) = delete;
  NvmlClockReader& operator=(const NvmlClockReader&) = delete;

  // One reading; valid = false if NVML fails (logged once). Never throws.
  ClockReading read() const;

 private:
  struct Library;
  explicit NvmlClockReader(std::unique_ptr<Library> library);
  std::unique_ptr<Library> library_;
};

}  // namespace kt
