// What a stored result was tuned with, read off its job, and how two sets of these keys compare:
// the one rule for staleness, used by the store (a re-tune's points replace stale ones on a
// front) and by the engine and server (answers flagged stale against the daemon's keys,
// engine/result_keys.hpp).
#pragma once

#include <string>
#include <vector>

#include "db/model.hpp"

namespace kt {

struct ResultKeys {
  std::string gpu_model;      // "" for a compile job
  int driver_version = 0;     // 0 = unknown
  std::string nvrtc_version;  // "" = unknown
  std::string family_hash;    // "" = unknown
};

// One key whose stored value differs from the one it is compared with.
struct ChangedKey {
  std::string key;  // "driver_version", "nvrtc_version", "family_hash"
  std::string stored;
  std::string current;
};

// The keys a job recorded when it was submitted.
ResultKeys stored_keys(const JobRecord& job);

// The keys that changed from stored to current (the GPU model is not compared: results of another
// model are another problem). A key unknown on either side is not compared (results older than
// the keys, a host without a GPU of the model), so nothing is called stale on a guess.
std::vector<ChangedKey> changed_keys(const ResultKeys& stored, const ResultKeys& current);

}  // namespace kt
