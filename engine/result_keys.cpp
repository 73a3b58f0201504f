#include "engine/result_keys.hpp"

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/compile/nvrtc_program.hpp"

namespace kt {

ResultKeys current_keys(const std::string& gpu_model, const std::vector<DeviceInfo>& devices,
                        const Family* family) {
  ResultKeys keys;
  keys.gpu_model = gpu_model;
  for (const DeviceInfo& device : devices)
    if (!gpu_model.empty() && device.name == gpu_model) {
      keys.driver_version = device.driver_version;
      break;
    }
  // The compiler this daemon links, whatever a worker reports.
  try {
    keys.nvrtc_version = nvrtc_version();
  } catch (const NvrtcError&) {
    // unknown: not compared
  }
  if (family != nullptr) keys.family_hash = family->source_hash;
  return keys;
}

Staleness staleness_of(const JobRecord& job, const std::vector<DeviceInfo>& devices,
                       const FamilyRegistry& families) {
  Staleness staleness;
  staleness.stored = stored_keys(job);
  staleness.changed = changed_keys(
      staleness.stored, current_keys(job.device_name, devices, families.find(job.family)));
  return staleness;
}

}  // namespace kt
