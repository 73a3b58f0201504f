#include "server/result_keys_view.hpp"

#include "engine/result_keys.hpp"

namespace kt {
namespace {

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

}  // namespace

void add_staleness(nlohmann::json& view, const JobRecord& job, const AppContext& context) {
  const ResultKeys stored = stored_keys(job);
  const ResultKeys current =
      current_keys(job.device_name, context.devices, context.families.find(job.family));
  nlohmann::json changed = nlohmann::json::array();
  for (const ChangedKey& key : changed_keys(stored, current))
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

}  // namespace kt
