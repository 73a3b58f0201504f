#include "db/job_keys.hpp"

namespace kt {

ResultKeys stored_keys(const JobRecord& job) {
  return {job.device_name, job.driver_version, job.nvrtc_version, job.family_hash};
}

std::vector<ChangedKey> changed_keys(const ResultKeys& stored, const ResultKeys& current) {
  std::vector<ChangedKey> changed;
  if (stored.driver_version > 0 && current.driver_version > 0 &&
      stored.driver_version != current.driver_version)
    changed.push_back({"driver_version", std::to_string(stored.driver_version),
                       std::to_string(current.driver_version)});
  if (!stored.nvrtc_version.empty() && !current.nvrtc_version.empty() &&
      stored.nvrtc_version != current.nvrtc_version)
    changed.push_back({"nvrtc_version", stored.nvrtc_version, current.nvrtc_version});
  if (!stored.family_hash.empty() && !current.family_hash.empty() &&
      stored.family_hash != current.family_hash)
    changed.push_back({"family_hash", stored.family_hash, current.family_hash});
  return changed;
}

}  // namespace kt
