#include "client/gpu_models.hpp"

#include <algorithm>

#include "client/text_format.hpp"

namespace kt {
namespace {

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
    names.push_back(name);
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

}  // namespace

std::vector<std::string> host_gpu_models(const CliContext& ctx) {
  std::vector<std::string> models;
  for (const nlohmann::json& d : ctx.client.devices().value("devices", nlohmann::json::array()))
    add_unique(models, d.value("name", ""));
  return models;
}

std::vector<std::string> store_gpu_models(const CliContext& ctx) {
  std::vector<std::string> models;
  for (const nlohmann::json& d :
       ctx.client.devices().value("known_devices", nlohmann::json::array()))
    add_unique(models, d.value("name", ""));
  const nlohmann::json tuned =
      ctx.client.call(boost::beast::http::verb::get, "/v1/tuned?limit=1000");
  for (const nlohmann::json& p : tuned.value("problems", nlohmann::json::array()))
    if (field(p, "device").is_string()) add_unique(models, p["device"].get<std::string>());
  return models;
}

std::string resolve_gpu_model(const CliContext& ctx, const std::string& device) {
  const nlohmann::json devices = ctx.client.devices();
  for (const nlohmann::json& d : devices.value("devices", nlohmann::json::array())) {
    const std::string name = d.value("name", "");
    if (device.empty() || std::to_string(d.value("ordinal", -1)) == device ||
        d.value("uuid", "") == device || name.find(device) != std::string::npos)
      return name;
  }
  if (device.empty()) {
    const nlohmann::json& error = field(devices, "error");
    throw ClientError(
        503, "no_device",
        "the daemon has no GPU" +
            (error.is_string() ? " (" + error.get<std::string>() + ")" : std::string()) +
            "; --device MODEL reads the results its store has for a model");
  }
  // No such GPU here: a model the store knows still answers what is tuned for it.
  const std::vector<std::string> stored = store_gpu_models(ctx);
  for (const std::string& name : stored)
    if (name.find(device) != std::string::npos) return name;
  throw ClientError(503, "no_device",
                    "no GPU of the daemon and no model of its store matches --device " + device +
                        " (models with results: " + listed(stored) + ")");
}

}  // namespace kt
