// Pinned configs: a job that measures only the configs it names (POST /v1/jobs "configs") rather
// than the whole space, e.g. one variant run again and again to see how much its time spreads.
// Each must be a point of the space for the job: a template written for the target arch, a value
// for exactly the axes that apply to that arch, each value one of its axis's, and every
// constraint true for the job's shape, dtype and device.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/config.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

class PinnedConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PinnedConfig {
  std::string template_name;
  Config config;
  bool operator==(const PinnedConfig&) const = default;
};

// Why `config` is not a point of `tmpl`'s space for this job, or nullopt if it is.
std::optional<std::string> why_not_in_space(const TemplateSpec& tmpl, const Config& config,
                                            const Shape& shape, const std::string& dtype,
                                            const DeviceLimits& limits);

// Reads a request's "configs": a non-empty array of objects {axis: integer, ...} with an optional
// "template": name. Without a template, the first template (manifest order) for which the config
// is a point of the space is taken. Duplicates are kept once. Throws PinnedConfigError naming the
// entry and the reason.
std::vector<PinnedConfig> validate_pinned_configs(const nlohmann::json& configs,
                                                  const Family& family, const Shape& shape,
                                                  const std::string& dtype,
                                                  const DeviceLimits& limits);

// The stored form (jobs.pinned_configs_json): [{"template": name, "config": {...}}, ...]; an
// empty list is "" (the whole space).
std::string pinned_configs_to_text(const std::vector<PinnedConfig>& configs);
// Inverse; throws std::runtime_error on unreadable text.
std::vector<PinnedConfig> pinned_configs_from_text(const std::string& text);

}  // namespace kt
