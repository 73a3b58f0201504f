#include "server/result_keys_view.hpp"

#include "server/json_views.hpp"

namespace kt {

void add_staleness(nlohmann::json& view, const Staleness& staleness) {
  const ResultKeys& stored = staleness.stored;
  nlohmann::json changed = nlohmann::json::array();
  for (const ChangedKey& key : staleness.changed)
    changed.push_back({{"key", key.key}, {"stored", key.stored}, {"current", key.current}});
  view["keys"] = {
      {"gpu_model", text_or_null(stored.gpu_model)},
      {"driver_version",
       stored.driver_version > 0 ? nlohmann::json(stored.driver_version) : nlohmann::json(nullptr)},
      {"nvrtc_version", text_or_null(stored.nvrtc_version)},
      {"family_hash", text_or_null(stored.family_hash)}};
  view["stale"] = !changed.empty();
  view["stale_keys"] = std::move(changed);
}

void add_staleness(nlohmann::json& view, const JobRecord& job, const AppContext& context) {
  add_staleness(view, staleness_of(job, context.devices, context.families));
}

}  // namespace kt
