// POST /v1/jobs: the body parsed with parse_json_body (depth limit, no trailing bytes), then each
// field checked for type, range and length before anything reads it further, so that every
// message quotes at most a short prefix of what the client sent.
#include "server/job_request.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "engine/result_keys.hpp"
#include "server/request_parsing.hpp"
#include "tuner/pinned_configs.hpp"
#include "tuner/search/searcher.hpp"

namespace kt {
namespace {

const std::set<std::string> kFields{"family",    "shape",  "dtype",          "device",
                                    "mode",      "arch",   "budget",         "pipeline",
                                    "configs",   "search", "search_seconds", "search_patience",
                                    "warm_start"};

nlohmann::json parse_body(const std::string& body, const AppContext& context) {
  if (body.size() > context.max_body_bytes)
    throw ApiError(HttpStatus::payload_too_large, "body_too_large",
                   "request body of " + std::to_string(body.size()) +
                       " bytes exceeds the limit of " + std::to_string(context.max_body_bytes));
  nlohmann::json json = parse_json_body(body);
  if (!json.is_object())
    throw ApiError(HttpStatus::bad_request, "invalid_field", "request body must be a JSON object");
  for (const auto& [name, value] : json.items())
    if (!kFields.count(name))
      throw ApiError(HttpStatus::bad_request, "unknown_field",
                     "unknown field " + quote_client_text(name) +
                         "; expected family, shape, dtype, mode, device, arch, budget, " +
                         "pipeline, configs, search, search_seconds, search_patience, warm_start");
  return json;
}

// Every string field names something short (a family, an arch, a GPU); a longer one is refused
// here, before messages written elsewhere (engine, tuner) could repeat it.
std::string bounded_name(const std::string& field, std::string text) {
  if (text.size() > kMaxNameChars)
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   "field '" + field + "' is too long (" + std::to_string(text.size()) +
                       " bytes; at most " + std::to_string(kMaxNameChars) +
                       "): " + quote_client_text(text));
  return text;
}

std::string required_string(const nlohmann::json& body, const std::string& name) {
  if (!body.contains(name))
    throw ApiError(HttpStatus::bad_request, "invalid_field", "missing field '" + name + "'");
  const nlohmann::json& value = body.at(name);
  if (!value.is_string())
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   "field '" + name + "' must be a string, got " + describe_client_value(value));
  return bounded_name(name, value.get<std::string>());
}

std::string optional_string(const nlohmann::json& body, const std::string& name,
                            const std::string& fallback) {
  if (!body.contains(name) || body.at(name).is_null()) return fallback;
  return required_string(body, name);
}

// "device" may be an ordinal (number) or a UUID / name substring (string).
std::string device_selector(const nlohmann::json& body) {
  if (!body.contains("device") || body.at("device").is_null()) return "";
  const nlohmann::json& device = body.at("device");
  if (device.is_number_unsigned()) return std::to_string(device.get<std::uint64_t>());
  if (device.is_string()) return bounded_name("device", device.get<std::string>());
  throw ApiError(
      HttpStatus::bad_request, "invalid_field",
      "field 'device' must be an ordinal, a UUID or a name, got " + describe_client_value(device));
}

std::int64_t budget_of(const nlohmann::json& body) {
  if (!body.contains("budget") || body.at("budget").is_null()) return 0;
  const nlohmann::json& budget = body.at("budget");
  if (!budget.is_number_integer())
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   "field 'budget' must be an integer, got " + describe_client_value(budget));
  if (budget.is_number_unsigned()) {
    if (budget.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_budget", "budget is too large");
    return budget.get<std::int64_t>();
  }
  throw ApiError(HttpStatus::unprocessable_entity, "invalid_budget",
                 "budget must be >= 0 (0 = every variant), got " + describe_client_value(budget));
}

Pipeline pipeline_of(const nlohmann::json& body) {
  const std::string text = optional_string(body, "pipeline", "pipelined");
  const auto pipeline = pipeline_from_string(text);
  if (!pipeline)
    throw ApiError(
        HttpStatus::unprocessable_entity, "invalid_pipeline",
        "unknown pipeline " + quote_client_text(text) + "; expected \"pipelined\" or \"serial\"");
  return *pipeline;
}

// The searcher and its stop conditions. Unnamed: the default searcher for a budgeted tuning job,
// the whole space in order without a budget; pinned configs, compile-only and serial jobs run
// their plan as it is (only "exhaustive" or "random" apply to them).
void search_of(const nlohmann::json& body, NewJob& job) {
  std::string names;
  for (const std::string& name : searcher_names()) names += (names.empty() ? "" : ", ") + name;
  const bool plan_as_is = !job.pinned_configs_json.empty() || job.mode == JobMode::compile ||
                          job.pipeline == Pipeline::serial;
  const std::string fallback =
      plan_as_is || job.budget == 0 ? "exhaustive" : std::string(kDefaultSearcher);
  job.search = optional_string(body, "search", fallback);
  if (!make_searcher(job.search, 1))
    throw ApiError(
        HttpStatus::unprocessable_entity, "invalid_search",
        "unknown search " + quote_client_text(job.search) + "; expected one of " + names);
  if (plan_as_is && job.search != "exhaustive" && job.search != "random")
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                   "search " + quote_client_text(job.search) +
                       " needs a pipelined tuning job over the family's space (not pinned "
                       "configs, compile-only or serial)");
  if (plan_as_is && job.search == "exhaustive" && job.budget > 0) job.search = "random";
  if (body.contains("search_seconds") && !body.at("search_seconds").is_null()) {
    const nlohmann::json& v = body.at("search_seconds");
    if (!v.is_number() || v.get<double>() < 0)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                     "search_seconds must be a number >= 0 (0 = no time limit), got " +
                         describe_client_value(v));
    job.search_seconds = v.get<double>();
  }
  if (body.contains("search_patience") && !body.at("search_patience").is_null()) {
    const nlohmann::json& v = body.at("search_patience");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                     "search_patience must be an integer batch count >= 0 (0 = none), got " +
                         describe_client_value(v));
    job.search_patience = v.get<int>();
  }
  if (plan_as_is && (job.search_seconds > 0 || job.search_patience > 0))
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                   "search_seconds and search_patience apply to pipelined tuning jobs over the "
                   "family's space");
}

JobMode mode_of(const std::string& text) {
  const auto mode = job_mode_from_string(text);
  if (!mode)
    throw ApiError(
        HttpStatus::unprocessable_entity, "invalid_mode",
        "unknown mode " + quote_client_text(text) + "; expected \"tune\" or \"compile\"");
  return *mode;
}

// The JSON types and ranges of "configs", checked before the tuner sees it: its messages would
// repeat a wrong value whole, and it reads an axis value above INT64_MAX as a negative number.
void check_configs_json(const nlohmann::json& configs) {
  const auto refuse = [](const std::string& message) {
    throw ApiError(HttpStatus::bad_request, "invalid_configs", message);
  };
  if (!configs.is_array())
    refuse("'configs' must be an array of configs, got " + describe_client_value(configs));
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const std::string at = "configs[" + std::to_string(i) + "]";
    const nlohmann::json& entry = configs[i];
    if (!entry.is_object())
      refuse(at + " must be an object {axis: value, ...}, got " + describe_client_value(entry));
    for (const auto& [name, value] : entry.items()) {
      if (name.size() > kMaxNameChars) refuse(at + " has no axis " + quote_client_text(name));
      const std::string field = at + "." + name;
      if (name == "template") {
        if (!value.is_string())
          refuse(field + " must be a string, got " + describe_client_value(value));
        if (value.get_ref<const std::string&>().size() > kMaxNameChars)
          refuse(field + " names no template: " + describe_client_value(value));
        continue;
      }
      if (!value.is_number_integer())
        refuse(field + " must be an integer, got " + describe_client_value(value));
      if (value.is_number_unsigned() &&
          value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        refuse(field + " is out of range: " + describe_client_value(value));
    }
  }
}

// "configs": measure only these points of the space (checked against the job's target).
std::string pinned_configs_of(const nlohmann::json& body, const Family& family, const NewJob& job,
                              const DeviceLimits& limits) {
  if (!body.contains("configs") || body.at("configs").is_null()) return "";
  check_configs_json(body.at("configs"));
  try {
    return pinned_configs_to_text(
        validate_pinned_configs(body.at("configs"), family, job.shape, job.dtype, limits));
  } catch (const PinnedConfigError& error) {
    throw ApiError(HttpStatus::bad_request, "invalid_configs", error.what());
  }
}

// The job's arch and GPU, checked against this host's devices.
JobTarget target_of(const NewJob& job, const nlohmann::json& body, const AppContext& context) {
  try {
    return resolve_target({job.mode, job.arch, device_selector(body), ""}, context.devices);
  } catch (const TargetError& error) {
    switch (error.problem()) {
      case TargetProblem::no_device: {
        const std::string why =
            context.device_error.empty() ? "no device found" : context.device_error;
        throw ApiError(HttpStatus::service_unavailable, "no_device",
                       "no GPU on this host (" + why +
                           "); use \"mode\":\"compile\" with \"arch\" to compile only");
      }
      case TargetProblem::unknown_device:
        throw ApiError(HttpStatus::unprocessable_entity, "unknown_device", error.what());
      case TargetProblem::arch_mismatch:
        throw ApiError(HttpStatus::unprocessable_entity, "arch_mismatch", error.what());
      case TargetProblem::unknown_arch:
        break;
    }
    throw ApiError(HttpStatus::unprocessable_entity, "unknown_arch", error.what());
  }
}

// A job for an arch none of the family's templates targets would plan only unsupported_arch rows
// and end "done" with nothing run: refused here, naming the archs the family does target.
void require_family_arch(const Family& family, const std::string& arch) {
  std::vector<std::string> targeted;
  for (const TemplateSpec& tmpl : family.templates) {
    if (tmpl.archs.empty()) return;  // a template written for every arch
    for (const std::string& name : tmpl.archs) {
      if (name == arch) return;
      if (std::find(targeted.begin(), targeted.end(), name) == targeted.end())
        targeted.push_back(name);
    }
  }
  std::string message = "family " + family.name + " has no template for " + arch +
                        "; its templates target: " + joined(targeted);
  if (std::find(targeted.begin(), targeted.end(), arch + "a") != targeted.end())
    message += " (did you mean " + arch + "a?)";
  throw ApiError(HttpStatus::unprocessable_entity, "unsupported_arch", message);
}

}  // namespace

JobSubmission parse_job_request(const std::string& body_text, const AppContext& context) {
  const nlohmann::json body = parse_body(body_text, context);

  NewJob job;
  job.family = required_string(body, "family");
  job.dtype = required_string(body, "dtype");
  if (!body.contains("shape"))
    throw ApiError(HttpStatus::bad_request, "invalid_field", "missing field 'shape'");
  const std::string mode = optional_string(body, "mode", "tune");
  job.arch = optional_string(body, "arch", "");
  job.budget = budget_of(body);
  job.pipeline = pipeline_of(body);
  device_selector(body);  // type check before any lookup

  // A name in the body, not a resource in the path: 422, like the other unknown names.
  const Family& family =
      require_family(context.families, job.family, HttpStatus::unprocessable_entity);
  require_dtype(family, job.dtype);
  job.shape = shape_from_json(family, body.at("shape"), job.dtype);

  job.mode = mode_of(mode);
  JobTarget target = target_of(job, body, context);
  require_family_arch(family, target.arch);
  job.arch = target.arch;
  if (target.device) {
    job.device_uuid = target.device->uuid;
    job.device_name = target.device->name;
  }
  // What the result will be keyed to (engine/result_keys.hpp).
  const ResultKeys keys = current_keys(job.device_name, context.devices, &family);
  if (target.device) job.driver_version = target.device->driver_version;
  job.nvrtc_version = keys.nvrtc_version;
  job.family_hash = keys.family_hash;
  job.pinned_configs_json = pinned_configs_of(body, family, job, target.limits);
  search_of(body, job);
  bool warm_start = true;
  if (body.contains("warm_start") && !body.at("warm_start").is_null()) {
    if (!body.at("warm_start").is_boolean())
      throw ApiError(HttpStatus::bad_request, "invalid_field",
                     "field 'warm_start' must be true or false, got " +
                         describe_client_value(body.at("warm_start")));
    warm_start = body.at("warm_start").get<bool>();
  }
  return {std::move(job), std::move(target), warm_start};
}

}  // namespace kt
