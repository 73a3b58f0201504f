// What the driver reports about the host's GPUs, in the form the daemon stores (DeviceInfo).
#pragma once

#include <nlohmann/json.hpp>

#include "tuner/device_limits.hpp"

namespace kt {

// One device, by ordinal. Throws DriverUnavailable / CudaError.
DeviceInfo describe_device(int ordinal);

// Every device: {"driver_found": bool, "error": "...", "driver_version": N, "devices": [...]}.
// Never throws: no driver gives driver_found=false and the reason; a driver without a usable
// device gives driver_found=true, no devices and the reason.
nlohmann::json probe_json();

}  // namespace kt
