#include "server/query_handlers.hpp"

#include <algorithm>
#include <cstdint>

#include "engine/job_target.hpp"
#include "server/best_answer.hpp"
#include "server/json_views.hpp"
#include "server/launch_view.hpp"
#include "server/paging.hpp"
#include "server/request_parsing.hpp"
#include "tuner/family_baseline.hpp"

namespace kt {
namespace {

std::string required_param(const ApiRequest& request, const std::string& name) {
  const auto value = request.query_param(name);
  if (!value || value->empty())
    throw ApiError(HttpStatus::bad_request, "missing_parameter",
                   "query parameter '" + name + "' is required");
  return *value;
}

// The (family, dtype, shape, device model) a best/pareto query is about.
struct TunedKey {
  const Family* family = nullptr;
  std::string dtype;
  Shape shape;
  std::string shape_key;
  std::string device_name;  // "" = any device model
};

// A device selector resolved against every device the store has seen (it outlives the GPUs of
// this host); an unmatched selector is taken as a device model name as written.
std::string device_model(AppContext& context, const std::string& selector) {
  if (selector.empty()) return "";
  const std::vector<DeviceInfo> known = context.store.devices();
  if (const DeviceInfo* device = select_device(known, selector)) return device->name;
  return selector;
}

TunedKey tuned_key(const ApiRequest& request, AppContext& context) {
  TunedKey key;
  key.family = &require_family(context.families, required_param(request, "family"));
  key.dtype = required_param(request, "dtype");
  require_dtype(*key.family, key.dtype);
  for (const auto& [name, value] : request.query) {
    if (name == "family" || name == "dtype" || name == "device") continue;
    const std::string dim = canonical_dim_name(*key.family, name);
    const bool is_dim = std::any_of(key.family->dims.begin(), key.family->dims.end(),
                                    [&](const DimSpec& spec) { return spec.name == dim; });
    if (!is_dim)
      throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                     "unknown query parameter " + quote_client_text(name));
  }
  key.shape = shape_from_query(*key.family, request.query, key.dtype);
  key.shape_key = canonical_key(key.shape);
  key.device_name = device_model(context, request.query_param("device").value_or(""));
  return key;
}

std::string describe(const TunedKey& key) {
  return key.family->name + " " + key.dtype + " " + key.shape_key + " on " +
         (key.device_name.empty() ? std::string("any device") : key.device_name);
}

nlohmann::json key_json(const TunedKey& key) {
  return {{"family", key.family->name},
          {"dtype", key.dtype},
          {"shape", to_json(key.shape)},
          {"shape_key", key.shape_key},
          {"device",
           key.device_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(key.device_name)}};
}

}  // namespace

ApiResponse get_best(const ApiRequest& request, AppContext& context) {
  const TunedKey key = tuned_key(request, context);
  const auto best = context.store.best(key.family->name, key.dtype, key.shape_key, key.device_name);
  // No variant of ours measured: a job that timed the baseline still answers (with it).
  std::optional<JobRecord> baseline_job;
  if (!best)
    baseline_job = context.store.newest_baseline_job(key.family->name, key.dtype, key.shape_key,
                                                     key.device_name);
  // what speedup compares with (the family's baseline; its reference when it names none)
  const std::string baseline_kind =
      key.family->baseline ? key.family->baseline->kind : key.family->reference.kind;
  auto body = best_answer_json(best, baseline_job, baseline_kind);
  if (!body)
    throw ApiError(HttpStatus::not_found, "not_tuned", "nothing tuned for " + describe(key));
  // How to launch our best variant (the top-level one, or best_own when the baseline wins).
  (*body)["launch"] = nullptr;
  if (best) {
    std::string why;
    if (auto launch = launch_view(context, best->job, best->variant, &why))
      (*body)["launch"] = std::move(*launch);
  }
  (*body)["reference"] = key.family->reference.kind;  // what speedup_vs_reference compares with
  (*body)["baseline"] = baseline_kind;
  // An external baseline (PyTorch SDPA) is not timed in-process: speedup fields stay null.
  const nlohmann::json summary = baseline_summary(*key.family);
  (*body)["baseline_description"] = summary["description"];
  (*body)["baseline_in_process"] = summary["in_process"];
  return json_response(HttpStatus::ok, *body);
}

ApiResponse get_pareto(const ApiRequest& request, AppContext& context) {
  const TunedKey key = tuned_key(request, context);
  nlohmann::json front = nlohmann::json::array();
  for (const VariantRecord& variant :
       context.store.pareto(key.family->name, key.dtype, key.shape_key, key.device_name))
    front.push_back(variant_to_json(variant));
  nlohmann::json body = key_json(key);
  body["count"] = front.size();
  body["front"] = std::move(front);
  return json_response(HttpStatus::ok, body);
}

ApiResponse get_history(const ApiRequest& request, AppContext& context) {
  JobFilter filter;
  for (const auto& [name, value] : request.query) {
    if (name == "family") {
      filter.family = value;
    } else if (name == "status") {
      filter.status = job_status_from_string(value);
      if (!filter.status)
        throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                       "unknown job status " + quote_client_text(value) +
                           "; expected queued, running, done, failed or cancelled");
    } else if (name == "offset") {  // deprecated: kept for old clients, `cursor` replaces it
      const std::int64_t offset = parse_query_integer(value, name);
      if (offset > INT32_MAX)
        throw ApiError(HttpStatus::bad_request, "invalid_parameter", "offset is too large");
      filter.offset = static_cast<int>(offset);
    } else if (name != "limit" && name != "cursor") {
      throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                     "unknown query parameter " + quote_client_text(name));
    }
  }
  filter.limit = page_limit(request);
  const std::int64_t before_id = page_cursor(request);
  if (before_id > 0 && filter.offset > 0)
    throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                   "offset and cursor cannot be combined; follow `next` without offset");
  // A typo must not read as "no jobs": a family neither loaded nor in the store is unknown.
  if (!filter.family.empty() && context.families.find(filter.family) == nullptr) {
    JobFilter any_of_family;
    any_of_family.family = filter.family;
    any_of_family.limit = 1;
    if (context.store.job_page(any_of_family, 0).jobs.empty())
      throw ApiError(HttpStatus::not_found, "unknown_family",
                     unknown_family_message(context.families, filter.family));
  }
  const JobPage page = context.store.job_page(filter, before_id);
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRecord& job : page.jobs)
    jobs.push_back(job_to_json(job, context.store.progress(job.id)));
  return json_response(HttpStatus::ok, {{"limit", filter.limit},
                                        {"offset", filter.offset},
                                        {"count", jobs.size()},
                                        {"next", next_cursor_json(page.next_before_id)},
                                        {"jobs", jobs}});
}

ApiResponse get_families(const ApiRequest&, AppContext& context) {
  nlohmann::json families = nlohmann::json::array();
  for (const Family* family : context.families.all()) families.push_back(family_to_json(*family));
  return json_response(HttpStatus::ok,
                       {{"families", families}, {"errors", context.families.errors()}});
}

ApiResponse get_devices(const ApiRequest&, AppContext& context) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceInfo& device : context.devices) devices.push_back(to_json(device));
  nlohmann::json known = nlohmann::json::array();
  for (const DeviceInfo& device : context.store.devices()) known.push_back(to_json(device));
  return json_response(HttpStatus::ok, {{"devices", devices},
                                        {"error", context.device_error.empty()
                                                      ? nlohmann::json(nullptr)
                                                      : nlohmann::json(context.device_error)},
                                        {"known_devices", known}});
}

ApiResponse get_health(const ApiRequest&, AppContext& context) {
  return json_response(HttpStatus::ok, {{"status", "ok"},
                                        {"version", context.version},
                                        {"devices", context.devices.size()},
                                        {"families", context.families.all().size()}});
}

}  // namespace kt
