#include "worker/device_probe.hpp"

#include <array>
#include <cstdio>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "worker/driver_api.hpp"

namespace kt {
namespace {

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  KT_CU(cuDeviceGetAttribute, &value, which, device);
  return value;
}

// nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string format_uuid(const CUuuid& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex.data();
  }
  return text;
}

std::string nvrtc_version_or_unknown() {
  try {
    return nvrtc_version();
  } catch (const std::exception&) {
    return "unknown";
  }
}

}  // namespace

DeviceInfo describe_device(int ordinal) {
  CUdevice device = 0;
  KT_CU(cuDeviceGet, &device, ordinal);
  DeviceInfo info;
  info.ordinal = ordinal;
  std::array<char, 256> name{};
  KT_CU(cuDeviceGetName, name.data(), static_cast<int>(name.size()), device);
  info.name = name.data();
  CUuuid uuid{};
  KT_CU(cuDeviceGetUuid, &uuid, device);
  info.uuid = format_uuid(uuid);
  info.sm_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.sm_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.arch = arch_for_compute_capability(info.sm_major, info.sm_minor);
  info.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  std::size_t memory = 0;
  KT_CU(cuDeviceTotalMem, &memory, device);
  info.memory_bytes = static_cast<std::int64_t>(memory);
  info.l2_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.smem_per_block_optin =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.smem_per_sm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info.max_threads_per_block = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.regs_per_block = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  KT_CU(cuDriverGetVersion, &info.driver_version);
  info.nvrtc_version = nvrtc_version_or_unknown();
  return info;
}

nlohmann::json probe_json() {
  nlohmann::json answer = {{"driver_found", false},
                           {"error", ""},
                           {"driver_version", 0},
                           {"devices", nlohmann::json::array()}};
  try {
    cuda::driver();
  } catch (const cuda::DriverUnavailable& e) {
    answer["error"] = e.what();
    return answer;
  } catch (const std::exception& e) {  // cuInit failed: a driver, but nothing usable
    answer["driver_found"] = true;
    answer["error"] = e.what();
    return answer;
  }
  answer["driver_found"] = true;
  try {
    int version = 0;
    KT_CU(cuDriverGetVersion, &version);
    answer["driver_version"] = version;
    int count = 0;
    KT_CU(cuDeviceGetCount, &count);
    for (int ordinal = 0; ordinal < count; ++ordinal)
      answer["devices"].push_back(to_json(describe_device(ordinal)));
    if (count == 0) answer["error"] = "the NVIDIA driver reports no CUDA device";
  } catch (const std::exception& e) {
    answer["error"] = e.what();
  }
  return answer;
}

}  // namespace kt
