// A GPU the tests pretend a host has: handler and planning tests submit jobs against it without a
// driver (a scheduler that is never started leaves them queued).
#pragma once

#include <string>

#include "tuner/device_limits.hpp"

namespace kt::test {

inline const std::string kFakeH100Name = "NVIDIA H100 80GB HBM3";

inline DeviceInfo fake_h100(int driver_version = 13000) {
  DeviceInfo device;
  device.name = kFakeH100Name;
  device.uuid = "GPU-aaaa-0000";
  device.sm_major = 9;
  device.arch = "sm_90a";
  device.sm_count = 132;
  device.driver_version = driver_version;
  return device;
}

}  // namespace kt::test
