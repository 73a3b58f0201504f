// A recorded whole-space job: every variant of one (family, shape, dtype, GPU) with its status,
// median time and compile-time resource report, as `kerntune export` writes it and kt-replay
// reads it (format "kerntune-space/1", documented in docs/search.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/search/searcher.hpp"

namespace kt {

inline constexpr const char* kSpaceFormat = "kerntune-space/1";

struct RecordedVariant {
  SearchCandidate candidate;        // template, config, resource report (when compiled)
  std::string status;               // the variant's final status ("measured", "compile_error", ...)
  std::optional<double> median_us;  // set for measured variants only
};

struct RecordedSpace {
  std::string family;
  Config shape;
  std::string dtype;
  nlohmann::json device = nlohmann::json::object();      // name, arch, driver, ...
  nlohmann::json provenance = nlohmann::json::object();  // where it was recorded, how
  std::vector<RecordedVariant> variants;

  // The fastest measured median; nullopt when nothing was measured.
  std::optional<double> optimum_us() const;
};

// When a space was recorded: provenance "created_at" (kerntune export) or "recorded" (converted
// reports); "" when neither is there. ISO dates, so they compare as strings.
std::string recorded_at(const RecordedSpace& space);

// One space per (family, dtype, GPU model, shape): the most recently recorded, since an older
// recording of the same problem timed earlier versions of the templates (a shape predictor fitted
// on both learns two answers for one question). Keeps the survivors' order.
std::vector<RecordedSpace> newest_recordings(std::vector<RecordedSpace> spaces);

// Throws std::invalid_argument naming what is wrong (format, a missing field, a bad value).
RecordedSpace recorded_space_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RecordedSpace& space);

}  // namespace kt
