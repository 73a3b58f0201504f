#include "tuner/pinned_configs.hpp"

#include <algorithm>

#include "tuner/client_values.hpp"
#include "tuner/expression.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string value_list(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t value : values) text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

// The entry without its "template" key, as a Config.
Config config_of(const nlohmann::json& entry, const std::string& at) {
  nlohmann::json axes = entry;
  axes.erase("template");
  if (axes.empty()) throw PinnedConfigError(at + " names no axis value");
  try {
    return int_map_from_json(axes);
  } catch (const std::exception& e) {
    throw PinnedConfigError(at + ": " + e.what());
  }
}

const TemplateSpec* find_template(const Family& family, const std::string& name) {
  for (const TemplateSpec& tmpl : family.templates)
    if (tmpl.name == name) return &tmpl;
  return nullptr;
}

}  // namespace

std::optional<std::string> why_not_in_space(const TemplateSpec& tmpl, const Config& config,
                                            const Shape& shape, const std::string& dtype,
                                            const DeviceLimits& limits) {
  if (!tmpl.archs.empty() && !contains(tmpl.archs, limits.arch))
    return "template " + quote_client_text(tmpl.name) + " is not written for " + limits.arch;
  for (const AxisSpec& axis : tmpl.axes) {
    const bool applies = axis.archs.empty() || contains(axis.archs, limits.arch);
    const auto value = config.find(axis.name);
    if (!applies) {
      if (value != config.end())
        return "axis " + axis.name + " of template " + quote_client_text(tmpl.name) +
               " does not apply to " + limits.arch;
      continue;
    }
    if (value == config.end())
      return "no value for axis " + axis.name + " of template " + quote_client_text(tmpl.name);
    if (std::find(axis.values.begin(), axis.values.end(), value->second) == axis.values.end())
      return axis.name + " = " + std::to_string(value->second) + " is not one of " +
             value_list(axis.values);
  }
  for (const auto& [name, value] : config)
    if (std::none_of(tmpl.axes.begin(), tmpl.axes.end(),
                     [&axis_name = name](const AxisSpec& axis) { return axis.name == axis_name; }))
      return quote_client_text(name) + " is not an axis of template " +
             quote_client_text(tmpl.name);
  const Bindings bindings = make_bindings(shape, config, dtype, limits);
  for (const std::string& text : tmpl.constraints) {
    try {
      if (shared_expression(text).evaluate(bindings) == 0) return "constraint failed: " + text;
    } catch (const ExpressionError& e) {
      return "constraint " + text + " cannot be evaluated: " + e.what();
    }
  }
  return std::nullopt;
}

std::vector<PinnedConfig> validate_pinned_configs(const nlohmann::json& configs,
                                                  const Family& family, const Shape& shape,
                                                  const std::string& dtype,
                                                  const DeviceLimits& limits) {
  if (!configs.is_array())
    throw PinnedConfigError("'configs' must be an array of configs, got " + configs.dump());
  if (configs.empty())
    throw PinnedConfigError("'configs' is empty; leave it out to tune the whole space");
  std::vector<PinnedConfig> out;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const std::string at = "configs[" + std::to_string(i) + "]";
    const nlohmann::json& entry = configs[i];
    if (!entry.is_object())
      throw PinnedConfigError(at + " must be an object {axis: value, ...}, got " + entry.dump());
    const Config config = config_of(entry, at);
    PinnedConfig pinned;
    pinned.config = config;
    if (entry.contains("template")) {
      if (!entry.at("template").is_string())
        throw PinnedConfigError(at + ".template must be a string, got " +
                                entry.at("template").dump());
      const std::string name = entry.at("template").get<std::string>();
      const TemplateSpec* tmpl = find_template(family, name);
      if (tmpl == nullptr)
        throw PinnedConfigError(at + ": family " + quote_client_text(family.name) +
                                " has no template " + quote_client_text(name));
      if (auto why = why_not_in_space(*tmpl, config, shape, dtype, limits))
        throw PinnedConfigError(at + " is not a point of the space: " + *why);
      pinned.template_name = name;
    } else {
      std::optional<std::string> first_reason;
      for (const TemplateSpec& tmpl : family.templates) {
        const auto why = why_not_in_space(tmpl, config, shape, dtype, limits);
        if (!why) {
          pinned.template_name = tmpl.name;
          break;
        }
        if (!first_reason) first_reason = "template " + quote_client_text(tmpl.name) + ": " + *why;
      }
      if (pinned.template_name.empty())
        throw PinnedConfigError(at + " is not a point of the space (" +
                                first_reason.value_or("the family has no template") + ")");
    }
    if (std::find(out.begin(), out.end(), pinned) == out.end()) out.push_back(std::move(pinned));
  }
  return out;
}

std::string pinned_configs_to_text(const std::vector<PinnedConfig>& configs) {
  if (configs.empty()) return "";
  nlohmann::json list = nlohmann::json::array();
  for (const PinnedConfig& pinned : configs)
    list.push_back({{"template", pinned.template_name}, {"config", to_json(pinned.config)}});
  return list.dump();
}

std::vector<PinnedConfig> pinned_configs_from_text(const std::string& text) {
  std::vector<PinnedConfig> out;
  if (text.empty()) return out;
  try {
    for (const nlohmann::json& entry : nlohmann::json::parse(text)) {
      PinnedConfig pinned;
      pinned.template_name = entry.at("template").get<std::string>();
      pinned.config = int_map_from_json(entry.at("config"));
      out.push_back(std::move(pinned));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("stored pinned configs '" + text + "' are unreadable: " + e.what());
  }
  return out;
}

}  // namespace kt
