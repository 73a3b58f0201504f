#include "tuner/device_limits.hpp"

#include <array>

namespace kt {
namespace {

struct ArchRow {
  const char* arch;
  int sm;
  std::int64_t smem_optin;
  std::int64_t smem_per_sm;
  int max_cluster;
  int tmem_columns;
  // SMs of one common part of the arch (named in the table's comments), for compile-only jobs
  // only: a job on a GPU takes the device's own count. 0 where no part is recorded.
  int typical_sm_count;
};

// Shared-memory figures from the CUDA programming guide's per-compute-capability table.
constexpr std::array<ArchRow, 12> kArchTable{{
    {"sm_80", 80, 163 * 1024, 164 * 1024, 1, 0, 108},       // A100
    {"sm_86", 86, 99 * 1024, 100 * 1024, 1, 0, 84},         // A40, RTX A6000
    {"sm_89", 89, 99 * 1024, 100 * 1024, 1, 0, 142},        // L40S
    {"sm_90", 90, 227 * 1024, 228 * 1024, 8, 0, 132},       // H100 SXM, H200
    {"sm_90a", 90, 227 * 1024, 228 * 1024, 8, 0, 132},      // H100 SXM, H200
    {"sm_100", 100, 227 * 1024, 228 * 1024, 8, 512, 148},   // B200
    {"sm_100a", 100, 227 * 1024, 228 * 1024, 8, 512, 148},  // B200
    {"sm_103", 103, 227 * 1024, 228 * 1024, 8, 512, 0},     // none recorded
    {"sm_103a", 103, 227 * 1024, 228 * 1024, 8, 512, 0},    // none recorded
    {"sm_120", 120, 99 * 1024, 100 * 1024, 8, 0, 170},      // RTX 5090
    {"sm_120a", 120, 99 * 1024, 100 * 1024, 8, 0, 170},     // RTX 5090
    {"sm_75", 75, 64 * 1024, 64 * 1024, 1, 0, 40},          // T4
}};

}  // namespace

std::optional<DeviceLimits> limits_for_arch(const std::string& arch) {
  for (const ArchRow& row : kArchTable) {
    if (arch != row.arch) continue;
    DeviceLimits limits;
    limits.arch = row.arch;
    limits.sm = row.sm;
    limits.smem_optin = row.smem_optin;
    limits.smem_per_sm = row.smem_per_sm;
    limits.max_cluster = row.max_cluster;
    limits.tmem_columns = row.tmem_columns;
    limits.sm_count = row.typical_sm_count;
    return limits;
  }
  return std::nullopt;
}

std::vector<std::string> known_archs() {
  std::vector<std::string> archs;
  for (const ArchRow& row : kArchTable) archs.emplace_back(row.arch);
  return archs;
}

std::string arch_for_compute_capability(int major, int minor) {
  std::string arch = "sm_" + std::to_string(major * 10 + minor);
  if ((major == 9 && minor == 0) || (major == 10 && (minor == 0 || minor == 3))) arch += 'a';
  return arch;
}

DeviceLimits limits_for_device(const DeviceInfo& device) {
  DeviceLimits limits = limits_for_arch(device.arch).value_or(DeviceLimits{});
  limits.arch = device.arch;
  limits.sm = device.sm_major * 10 + device.sm_minor;
  if (device.smem_per_block_optin > 0) limits.smem_optin = device.smem_per_block_optin;
  if (device.smem_per_sm > 0) limits.smem_per_sm = device.smem_per_sm;
  if (device.max_threads_per_block > 0) limits.max_threads = device.max_threads_per_block;
  if (device.regs_per_block > 0) limits.regs_per_block = device.regs_per_block;
  limits.sm_count = device.sm_count;  // the device's own, never the table's typical part
  limits.l2_bytes = device.l2_bytes;
  return limits;
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"uuid", d.uuid},
          {"sm_major", d.sm_major},
          {"sm_minor", d.sm_minor},
          {"arch", d.arch},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.memory_bytes},
          {"l2_bytes", d.l2_bytes},
          {"smem_per_block_optin", d.smem_per_block_optin},
          {"smem_per_sm", d.smem_per_sm},
          {"max_threads_per_block", d.max_threads_per_block},
          {"regs_per_block", d.regs_per_block},
          {"clock_khz", d.clock_khz},
          {"driver_version", d.driver_version},
          {"nvrtc_version", d.nvrtc_version}};
}

DeviceInfo device_info_from_json(const nlohmann::json& j) {
  DeviceInfo d;
  d.ordinal = j.value("ordinal", 0);
  d.name = j.value("name", "");
  d.uuid = j.value("uuid", "");
  d.sm_major = j.value("sm_major", 0);
  d.sm_minor = j.value("sm_minor", 0);
  d.arch = j.value("arch", "");
  d.sm_count = j.value("sm_count", 0);
  d.memory_bytes = j.value("memory_bytes", std::int64_t{0});
  d.l2_bytes = j.value("l2_bytes", std::int64_t{0});
  d.smem_per_block_optin = j.value("smem_per_block_optin", std::int64_t{0});
  d.smem_per_sm = j.value("smem_per_sm", std::int64_t{0});
  d.max_threads_per_block = j.value("max_threads_per_block", 0);
  d.regs_per_block = j.value("regs_per_block", 0);
  d.clock_khz = j.value("clock_khz", 0);
  d.driver_version = j.value("driver_version", 0);
  d.nvrtc_version = j.value("nvrtc_version", "");
  return d;
}

}  // namespace kt
