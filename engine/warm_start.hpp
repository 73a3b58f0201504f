// Knowledge across shapes: the tuned shapes nearest to a shape (same family, dtype and GPU model;
// tuner/shape_distance.hpp's distance), for /v1/best's nearest answer and for a job's warm start,
// whose seeds are the fastest configs measured for those shapes. The lookup reads the index of
// tuned shapes (Store::tuned_shape_keys), never the variants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "tuner/search/warm_start.hpp"

namespace kt {

struct NearShape {
  std::string shape_key;
  Shape shape;
  double distance = 0;
};

// How many tuned shapes of one family, dtype and model a lookup considers (the index is read in
// key order; beyond this the rest are not seen).
inline constexpr int kMaxTunedShapes = 10000;

// Up to `count` tuned shapes of the family and dtype on the device model ("" = any), nearest
// first (ties by key), the shape itself left out; shapes that are not comparable (different dims,
// a differing flag dim) are skipped.
std::vector<NearShape> nearest_tuned_shapes(Store& store, const std::string& family,
                                            const std::string& dtype, const Shape& shape,
                                            const std::string& device_name, std::size_t count);

struct WarmStartSource {
  std::string shape_key;
  double distance = 0;
  std::int64_t job_id = 0;  // the job whose variants gave the seeds
};
struct WarmStartSeed {
  std::string template_name;
  Config config;
  std::string shape_key;  // the tuned shape it came from
  double median_us = 0;   // its time there
};
struct WarmStart {
  std::vector<WarmStartSource> from;
  std::vector<WarmStartSeed> seeds;  // nearest shape's first, fastest first within a shape
};

// The warm start of a new job of this problem: the fastest configs (kSeedCandidatesPerShape,
// tuner/search/warm_start.hpp) of the best job of each of the kWarmStartShapes nearest tuned
// shapes; the job measures the first kSeedsPerShape of each that survive its constraints
// (SearchFeed). nullopt when no comparable shape is tuned.
std::optional<WarmStart> find_warm_start(Store& store, const std::string& family,
                                         const std::string& dtype, const Shape& shape,
                                         const std::string& device_name);

// As stored in jobs.warm_start_json and shown in the job view:
// {"from": [{"shape_key", "shape", "distance", "job_id"}], "seeds": [{"template", "config",
// "shape_key", "median_us"}]}. The parser throws std::runtime_error on malformed text.
nlohmann::json to_json(const WarmStart& warm_start);
WarmStart warm_start_from_text(const std::string& text);

}  // namespace kt
