#include "engine/warm_start.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "tuner/shape_distance.hpp"

namespace kt {

std::vector<NearShape> nearest_tuned_shapes(Store& store, const std::string& family,
                                            const std::string& dtype, const Shape& shape,
                                            const std::string& device_name, std::size_t count) {
  const std::string own_key = canonical_key(shape);
  std::vector<NearShape> near;
  for (const std::string& key :
       store.tuned_shape_keys(family, dtype, device_name, kMaxTunedShapes)) {
    if (key == own_key) continue;
    Shape tuned;
    try {
      tuned = parse_canonical_key(key);
    } catch (const std::invalid_argument&) {
      continue;  // not a key this daemon wrote
    }
    if (const auto distance = shape_distance(shape, tuned))
      near.push_back({key, std::move(tuned), *distance});
  }
  std::sort(near.begin(), near.end(), [](const NearShape& a, const NearShape& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.shape_key < b.shape_key;
  });
  if (near.size() > count) near.resize(count);
  return near;
}

std::optional<WarmStart> find_warm_start(Store& store, const std::string& family,
                                         const std::string& dtype, const Shape& shape,
                                         const std::string& device_name) {
  WarmStart warm;
  std::set<std::pair<std::string, std::string>> seen;  // (template, config key)
  for (const NearShape& near :
       nearest_tuned_shapes(store, family, dtype, shape, device_name, kWarmStartShapes)) {
    const auto best = store.best(family, dtype, near.shape_key, device_name);
    if (!best) continue;
    warm.from.push_back({near.shape_key, near.distance, best->job.id});
    // The front's best first (after a final comparison it need not be the first-pass fastest).
    std::vector<VariantRecord> rows{best->variant};
    for (VariantRecord& row :
         store.fastest_variants(best->job.id, static_cast<int>(kSeedCandidatesPerShape)))
      rows.push_back(std::move(row));
    std::size_t taken = 0;
    for (const VariantRecord& row : rows) {
      if (taken >= kSeedCandidatesPerShape) break;
      if (!seen.insert({row.template_name, canonical_key(row.config)}).second) continue;
      warm.seeds.push_back({row.template_name, row.config, near.shape_key,
                            row.timing ? row.timing->median_us : 0.0});
      ++taken;
    }
  }
  if (warm.seeds.empty()) return std::nullopt;
  return warm;
}

nlohmann::json to_json(const WarmStart& warm_start) {
  nlohmann::json from = nlohmann::json::array();
  for (const WarmStartSource& source : warm_start.from)
    from.push_back({{"shape_key", source.shape_key},
                    {"shape", parse_canonical_key(source.shape_key)},
                    {"distance", source.distance},
                    {"job_id", source.job_id}});
  nlohmann::json seeds = nlohmann::json::array();
  for (const WarmStartSeed& seed : warm_start.seeds)
    seeds.push_back({{"template", seed.template_name},
                     {"config", seed.config},
                     {"shape_key", seed.shape_key},
                     {"median_us", seed.median_us}});
  return {{"from", from}, {"seeds", seeds}};
}

WarmStart warm_start_from_text(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    WarmStart warm;
    for (const nlohmann::json& source : j.at("from"))
      warm.from.push_back({source.at("shape_key").get<std::string>(),
                           source.at("distance").get<double>(),
                           source.at("job_id").get<std::int64_t>()});
    for (const nlohmann::json& seed : j.at("seeds"))
      warm.seeds.push_back({seed.at("template").get<std::string>(), seed.at("config").get<Config>(),
                            seed.at("shape_key").get<std::string>(),
                            seed.at("median_us").get<double>()});
    return warm;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed warm start: ") + e.what());
  }
}

}  // namespace kt
