// What a GPU offers a kernel: the numbers manifest constraints are checked against. They come from
// a probed device (the worker) or, for compile-only jobs without a GPU, from a table per arch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-xxxxxxxx-..."
  int sm_major = 0, sm_minor = 0;
  std::string arch;  // NVRTC target: "sm_90a" for 9.0, "sm_100a" for 10.0, else "sm_XY"
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t smem_per_block_optin = 0;
  std::int64_t smem_per_sm = 0;
  int max_threads_per_block = 0;
  int regs_per_block = 0;
  int clock_khz = 0;
  int driver_version = 0;     // cuDriverGetVersion, e.g. 13000
  std::string nvrtc_version;  // "13.0"
};

struct DeviceLimits {
  std::string arch;             // "sm_90a"
  int sm = 0;                   // 90, 100, ...
  std::int64_t smem_optin = 0;  // max dynamic+static shared memory per block (opt-in)
  std::int64_t smem_per_sm = 0;
  int max_threads = 1024;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  // A job on a GPU: the device's own count (cuDeviceGetAttribute). A compile-only job (no GPU):
  // the arch's typical part from the arch table (sm_90a: 132, an H100 SXM; sm_100a: 148, a B200),
  // so grid-size constraints prune as they would there; 0 for an arch with no part recorded.
  int sm_count = 0;
  int max_cluster = 8;  // portable cluster size limit
  std::int64_t l2_bytes = 0;
  int tmem_columns = 0;  // 512 on sm_100, 0 where there is no tensor memory
};

// Table of known targets: sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103,
// sm_120 (and *a), with a typical part's SM count: the limits of a compile-only job. nullopt for
// an unknown arch.
std::optional<DeviceLimits> limits_for_arch(const std::string& arch);
// Every arch limits_for_arch knows, in the table's order (for error messages).
std::vector<std::string> known_archs();
// Limits of a probed device: the arch table's per-arch facts with the measured numbers on top.
DeviceLimits limits_for_device(const DeviceInfo& device);
// "sm_90a" for 9.0 and "sm_100a" for 10.0 (arch-specific features wanted), "sm_XY" otherwise.
std::string arch_for_compute_capability(int major, int minor);

nlohmann::json to_json(const DeviceInfo& device);
DeviceInfo device_info_from_json(const nlohmann::json& j);

}  // namespace kt
