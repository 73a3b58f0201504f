// What a stored result was tuned with, against what this daemon runs with now. A result is keyed
// to its GPU model (the job's device_name: results of another model are another problem) and to
// the driver version, NVRTC's version and the family source's hash recorded on its job; when one
// of those differs from the daemon's, the result is stale: still served, flagged, re-tuned on
// request. The keys and their comparison are the store's (db/job_keys.hpp); the daemon's side is
// here.
#pragma once

#include <string>
#include <vector>

#include "db/job_keys.hpp"
#include "db/model.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

// The daemon's keys for results of a GPU model: the driver of its GPU of that model (unknown when
// it has none: results of a model this host lacks are not judged on the driver), its NVRTC and
// the family as loaded (family may be null: a family no longer served).
ResultKeys current_keys(const std::string& gpu_model, const std::vector<DeviceInfo>& devices,
                        const Family* family);

// A stored result's keys against this daemon's: what it was tuned with and which keys changed
// since (empty: not stale).
struct Staleness {
  ResultKeys stored;
  std::vector<ChangedKey> changed;
};

// The job's keys against the daemon's for its GPU model and its family as loaded now.
Staleness staleness_of(const JobRecord& job, const std::vector<DeviceInfo>& devices,
                       const FamilyRegistry& families);

}  // namespace kt
