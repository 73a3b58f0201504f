// Where a job runs: the arch it compiles for, the GPU it measures on (tune jobs) and the limits its
// constraints are checked against. One function resolves it, for a request (POST /v1/jobs) and for
// a job read back from the store (a resumed job), and the value travels with the job from there.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/model.hpp"
#include "tuner/device_limits.hpp"

namespace kt {

struct JobTarget {
  std::string arch;
  std::optional<DeviceInfo> device;  // tune jobs: the GPU the job calls its own
  DeviceLimits limits;
};

// What a job names of its target. Compile jobs: an arch. Tune jobs: a device selector
// (select_device) and, optionally, the arch the device must have.
struct TargetSpec {
  JobMode mode = JobMode::tune;
  std::string arch;
  std::string device;
  // A stored job whose own GPU is gone (a host whose GPUs were swapped) runs on a GPU of this
  // model and `arch` instead; "" for a request.
  std::string fallback_model;
};

enum class TargetProblem { unknown_arch, no_device, unknown_device, arch_mismatch };

class TargetError : public std::runtime_error {
 public:
  TargetError(TargetProblem problem, const std::string& message)
      : std::runtime_error(message), problem_(problem) {}
  TargetProblem problem() const { return problem_; }

 private:
  TargetProblem problem_;
};

// Throws TargetError: unknown_arch (compile job without a known arch), no_device (tune job, no
// GPU), unknown_device (no GPU matches), arch_mismatch (the arch given is not the device's).
JobTarget resolve_target(const TargetSpec& spec, const std::vector<DeviceInfo>& devices);

// The spec a stored job resolves again with: its own GPU by UUID, else one of the same model.
TargetSpec target_spec_of(const JobRecord& job);

// A GPU by ordinal ("0"), UUID (with or without "GPU-") or case-insensitive name substring; the
// first device for an empty selector. nullptr if none matches.
const DeviceInfo* select_device(const std::vector<DeviceInfo>& devices,
                                const std::string& selector);

}  // namespace kt
