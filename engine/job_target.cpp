#include "engine/job_target.hpp"

#include <algorithm>

#include "tuner/client_values.hpp"
#include "tuner/nearest_name.hpp"
#include "tuner/text.hpp"

namespace kt {
namespace {

std::string device_list(const std::vector<DeviceInfo>& devices) {
  std::string text;
  for (const DeviceInfo& device : devices)
    text += (text.empty() ? "" : ", ") + std::to_string(device.ordinal) + ": " + device.name +
            " (" + device.uuid + ")";
  return text;
}

JobTarget compile_target(const std::string& arch) {
  if (arch.empty())
    throw TargetError(TargetProblem::unknown_arch,
                      "\"mode\":\"compile\" needs \"arch\", e.g. \"sm_90a\" or \"sm_100a\"");
  std::optional<DeviceLimits> limits = limits_for_arch(arch);
  if (!limits) {
    std::string known;
    for (const std::string& name : known_archs()) known += (known.empty() ? "" : ", ") + name;
    throw TargetError(TargetProblem::unknown_arch, "unknown arch " + quote_client_text(arch) +
                                                       did_you_mean(arch, known_archs()) +
                                                       "; known archs: " + known);
  }
  return {arch, std::nullopt, std::move(*limits)};
}

const DeviceInfo* same_model(const std::vector<DeviceInfo>& devices, const std::string& model,
                             const std::string& arch) {
  if (model.empty()) return nullptr;
  const auto found = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
    return d.name == model && d.arch == arch;
  });
  return found == devices.end() ? nullptr : &*found;
}

}  // namespace

const DeviceInfo* select_device(const std::vector<DeviceInfo>& devices,
                                const std::string& selector) {
  if (devices.empty()) return nullptr;
  if (selector.empty()) return &devices.front();
  if (const auto ordinal = parse_decimal(selector)) {
    for (const DeviceInfo& device : devices)
      if (device.ordinal == *ordinal) return &device;
    return nullptr;
  }
  const std::string wanted = ascii_lower(selector);
  for (const DeviceInfo& device : devices) {
    const std::string uuid = ascii_lower(device.uuid);
    if (uuid == wanted || uuid == "gpu-" + wanted) return &device;
  }
  for (const DeviceInfo& device : devices)
    if (ascii_lower(device.name).find(wanted) != std::string::npos) return &device;
  return nullptr;
}

JobTarget resolve_target(const TargetSpec& spec, const std::vector<DeviceInfo>& devices) {
  if (spec.mode == JobMode::compile) return compile_target(spec.arch);
  if (devices.empty()) throw TargetError(TargetProblem::no_device, "no GPU on this host");
  const DeviceInfo* device = select_device(devices, spec.device);
  if (device == nullptr) device = same_model(devices, spec.fallback_model, spec.arch);
  if (device == nullptr)
    throw TargetError(TargetProblem::unknown_device, "no device matches " +
                                                         quote_client_text(spec.device) +
                                                         "; devices: " + device_list(devices));
  if (!spec.arch.empty() && spec.arch != device->arch)
    throw TargetError(TargetProblem::arch_mismatch,
                      "arch " + spec.arch + " does not match device " + device->name + " (" +
                          device->arch + "); leave \"arch\" out for tune jobs");
  return {device->arch, *device, limits_for_device(*device)};
}

TargetSpec target_spec_of(const JobRecord& job) {
  return {job.mode, job.arch, job.device_uuid, job.device_name};
}

}  // namespace kt
