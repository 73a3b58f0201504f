// Device-to-device copy bandwidth of one GPU, through the project's run-time-loaded driver API:
// cuMemcpyDtoDAsync of one large buffer into another on a non-blocking stream, warm-up copies,
// then each trial timed alone with CUDA events. A copy reads and writes every byte, so
// GB/s = 2 * bytes / time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt::bench {

struct CopyBandwidthMeasurement {
  int ordinal = 0;
  std::string device;       // cuDeviceGetName
  std::string driver;       // NVIDIA driver version ("580.159.04"), "" if unknown
  std::string cuda_driver;  // CUDA version the driver supports ("13.0")
  std::size_t bytes = 0;    // size of each buffer (bytes copied per trial)
  int warmup = 0;
  std::vector<double> trial_ms;
  double ms_median = 0;
  double gbps = 0;  // at the median time
  double gbps_min = 0, gbps_max = 0;
};

// Throws kt::cuda::DriverUnavailable / CudaError (no driver, no device, out of memory) and
// std::invalid_argument for bytes == 0 or trials < 1.
CopyBandwidthMeasurement measure_copy_bandwidth(int ordinal, std::size_t bytes, int warmup,
                                                int trials);

// {"device","ordinal","driver","cuda_driver","bytes","warmup","trials","ms_median","gbps",
//  "gbps_min","gbps_max","method"}
nlohmann::json copy_bandwidth_to_json(const CopyBandwidthMeasurement& m);

}  // namespace kt::bench
