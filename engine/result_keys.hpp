// What a stored result was tuned with, against what this daemon runs with now. A result is keyed
// to its GPU model (the job's device_name: results of another model are another problem) and to
// the driver version, NVRTC's version and the family source's hash recorded on its job; when one
// of those differs from the daemon's, the result is stale: still served, flagged, re-tuned on
// request.
#pragma once

#include <string>
#include <vector>

#include "db/model.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

struct ResultKeys {
  std::string gpu_model;      // "" for a compile job
  int driver_version = 0;     // 0 = unknown
  std::string nvrtc_version;  // "" = unknown
  std::string family_hash;    // "" = unknown
};

// One key whose stored value differs from the daemon's.
struct ChangedKey {
  std::string key;  // "driver_version", "nvrtc_version", "family_hash"
  std::string stored;
  std::string current;
};

// The keys a job recorded when it was submitted.
ResultKeys stored_keys(const JobRecord& job);

// The daemon's keys for results of a GPU model: the driver of its GPU of that model (unknown when
// it has none: results of a model this host lacks are not judged on the driver), its NVRTC and
// the family as loaded (family may be null: a family no longer served).
ResultKeys current_keys(const std::string& gpu_model, const std::vector<DeviceInfo>& devices,
                        const Family* family);

// The keys that changed. A key unknown on either side is not compared (results older than the
// keys, a host without a GPU of the model), so nothing is called stale on a guess.
std::vector<ChangedKey> changed_keys(const ResultKeys& stored, const ResultKeys& current);

}  // namespace kt
