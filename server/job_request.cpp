// POST /v1/jobs: the body parsed with parse_json_body (depth limit, no trailing bytes), then each
// field checked for type, range and length before anything reads it further, so that every
// message quotes at most a short prefix of what the client sent.
#include "server/job_request.hpp"

#include <cstdint>
#include <set>

#include "server/request_parsing.hpp"

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

// "search" names a searcher (the engine checks which apply); its stop conditions are numbers.
void search_of(const nlohmann::json& body, JobRequest& request) {
  if (body.contains("search") && !body.at("search").is_null())
    request.search = required_string(body, "search");
  if (body.contains("search_seconds") && !body.at("search_seconds").is_null()) {
    const nlohmann::json& v = body.at("search_seconds");
    if (!v.is_number() || v.get<double>() < 0)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                     "search_seconds must be a number >= 0 (0 = no time limit), got " +
                         describe_client_value(v));
    request.search_seconds = v.get<double>();
  }
  if (body.contains("search_patience") && !body.at("search_patience").is_null()) {
    const nlohmann::json& v = body.at("search_patience");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_search",
                     "search_patience must be an integer batch count >= 0 (0 = none), got " +
                         describe_client_value(v));
    request.search_patience = v.get<int>();
  }
}

JobMode mode_of(const std::string& text) {
  const auto mode = job_mode_from_string(text);
  if (!mode)
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_mode",
                   "unknown mode " + quote_client_text(text) +
                       "; expected \"tune\", \"compile\" or \"check\"");
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

}  // namespace

JobRequest parse_job_request(const std::string& body_text, const AppContext& context) {
  const nlohmann::json body = parse_body(body_text, context);

  JobRequest request;
  request.family = required_string(body, "family");
  request.dtype = required_string(body, "dtype");
  if (!body.contains("shape"))
    throw ApiError(HttpStatus::bad_request, "invalid_field", "missing field 'shape'");
  const std::string mode = optional_string(body, "mode", "tune");
  request.arch = optional_string(body, "arch", "");
  request.budget = budget_of(body);
  request.pipeline = pipeline_of(body);
  request.device = device_selector(body);

  // A name in the body, not a resource in the path: 422, like the other unknown names.
  const Family& family =
      require_family(context.families, request.family, HttpStatus::unprocessable_entity);
  require_dtype(family, request.dtype);
  request.shape = shape_from_json(family, body.at("shape"), request.dtype);
  request.mode = mode_of(mode);
  if (body.contains("configs") && !body.at("configs").is_null()) {
    check_configs_json(body.at("configs"));
    request.configs = body.at("configs");
  }
  search_of(body, request);
  request.warm_start = optional_flag(body, "warm_start", true);
  return request;
}

SubmissionHost submission_host(const Family& family, const AppContext& context) {
  return {family, context.devices, context.device_error};
}

ApiError api_error_of(const SubmissionError& error) {
  switch (error.problem()) {
    case SubmissionProblem::no_device:
      return ApiError(HttpStatus::service_unavailable, "no_device", error.what());
    case SubmissionProblem::unknown_device:
      return ApiError(HttpStatus::unprocessable_entity, "unknown_device", error.what());
    case SubmissionProblem::arch_mismatch:
      return ApiError(HttpStatus::unprocessable_entity, "arch_mismatch", error.what());
    case SubmissionProblem::unknown_arch:
      return ApiError(HttpStatus::unprocessable_entity, "unknown_arch", error.what());
    case SubmissionProblem::unsupported_arch:
      return ApiError(HttpStatus::unprocessable_entity, "unsupported_arch", error.what());
    case SubmissionProblem::invalid_configs:
      return ApiError(HttpStatus::bad_request, "invalid_configs", error.what());
    case SubmissionProblem::invalid_search:
      break;
  }
  return ApiError(HttpStatus::unprocessable_entity, "invalid_search", error.what());
}

JobSubmission plan_job_request(const std::string& body, const AppContext& context) {
  const JobRequest request = parse_job_request(body, context);
  const Family& family =
      require_family(context.families, request.family, HttpStatus::unprocessable_entity);
  try {
    return plan_job(request, submission_host(family, context));
  } catch (const SubmissionError& error) {
    throw api_error_of(error);
  }
}

}  // namespace kt
