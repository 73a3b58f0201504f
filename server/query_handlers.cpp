#include "server/query_handlers.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "engine/best_answer.hpp"
#include "engine/predicted_checks.hpp"
#include "engine/problem_query.hpp"
#include "engine/shape_predictors.hpp"
#include "engine/variant_launch.hpp"
#include "server/best_answer.hpp"
#include "server/job_handlers.hpp"
#include "server/job_request.hpp"
#include "server/json_views.hpp"
#include "server/paging.hpp"
#include "server/request_parsing.hpp"
#include "server/result_keys_view.hpp"

namespace kt {
namespace {

std::string required_param(const ApiRequest& request, const std::string& name) {
  const auto value = request.query_param(name);
  if (!value || value->empty())
    throw ApiError(HttpStatus::bad_request, "missing_parameter",
                   "query parameter '" + name + "' is required");
  return *value;
}

// The flags /v1/best takes besides the problem (docs/api.md).
const std::set<std::string> kBestFlags{"nearest", "tune_on_miss", "retune_stale", "predict"};

// The (family, dtype, shape, device model) a best/pareto query is about.
ProblemQuery tuned_key(const ApiRequest& request, AppContext& context,
                       const std::set<std::string>& flags = {}) {
  ProblemQuery key;
  key.family = &require_family(context.families, required_param(request, "family"));
  key.dtype = required_param(request, "dtype");
  require_dtype(*key.family, key.dtype);
  for (const auto& [name, value] : request.query) {
    if (name == "family" || name == "dtype" || name == "device" || flags.count(name)) continue;
    const std::string dim = canonical_dim_name(*key.family, name);
    const bool is_dim = std::any_of(key.family->dims.begin(), key.family->dims.end(),
                                    [&](const DimSpec& spec) { return spec.name == dim; });
    if (!is_dim)
      throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                     "unknown query parameter " + quote_client_text(name));
  }
  key.shape = shape_from_query(*key.family, request.query, key.dtype);
  key.shape_key = canonical_key(key.shape);
  key.device_name = device_model_of(context.store, request.query_param("device").value_or(""));
  return key;
}

std::string describe(const ProblemQuery& key) {
  // The device is the client's selector when no known GPU matches it: quoted short.
  return key.family->name + " " + key.dtype + " " + key.shape_key + " on " +
         (key.device_name.empty() ? std::string("any device") : quote_client_text(key.device_name));
}

nlohmann::json key_json(const ProblemQuery& key) {
  return {{"family", key.family->name},
          {"dtype", key.dtype},
          {"shape", to_json(key.shape)},
          {"shape_key", key.shape_key},
          {"device",
           key.device_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(key.device_name)}};
}

// 202 with the job tuning the problem (an unfinished one of it, else a new one with POST
// /v1/jobs's defaults on a GPU of device_model, "" = the first) and the answer given meanwhile.
ApiResponse tuning_answer(AppContext& context, const ProblemQuery& key,
                          const std::string& device_model, nlohmann::json answer) {
  const TuneOnRequest tuning = start_tuning(context, key, device_model);
  const std::string link = "/v1/jobs/" + std::to_string(tuning.job.id);
  ApiResponse response =
      json_response(HttpStatus::accepted, {{"job", job_view(context, tuning.job)},
                                           {"link", link},
                                           {"new_job", tuning.new_job},
                                           {"answer", std::move(answer)}});
  response.headers.emplace_back("Location", link);
  return response;
}

// The limits a predicted config must fit: the asked GPU model's (else the first GPU's), or on a
// daemon without GPUs the recorded Hopper part.
DeviceLimits prediction_limits(const AppContext& context, const std::string& device_model) {
  for (const DeviceInfo& d : context.devices)
    if (device_model.empty() || d.name == device_model) return limits_for_device(d);
  return limits_for_arch("sm_90a").value_or(DeviceLimits{});
}

// The predicted config's check (engine/predicted_checks.hpp), queued by the first answer: on a GPU
// of the model when this daemon has one, else compile only.
PredictedCheck predicted_check(AppContext& context, const ProblemQuery& key,
                               const std::string& arch, const PredictedConfig& predicted) {
  PredictedCheck check;
  if (context.predicted_checks) {
    check = context.predicted_checks->check(key, arch, predicted.template_name, predicted.config,
                                            submission_host(*key.family, context));
  } else {
    check.status = "not_checked";
    check.reason = "this daemon checks no predicted config";
  }
  return check;
}

nlohmann::json check_json(const PredictedCheck& check) {
  const auto known = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  const auto text = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  return {{"kind", check.kind},
          {"status", check.status},
          {"job_id", check.job_id > 0 ? nlohmann::json(check.job_id) : nlohmann::json(nullptr)},
          {"reason", text(check.reason)},
          {"registers", known(check.registers)},
          {"spill_bytes", known(check.spill_bytes)},
          {"smem_bytes", known(check.smem_bytes)},
          {"device_model", text(check.device_name)},
          {"measured_us", known(check.measured_us)},
          {"max_rel_error", known(check.max_rel_error)}};
}

// A predicted answer and its check's status ("" when it has none).
struct PredictedAnswer {
  nlohmann::json body;
  std::string check_status;
};

// GET /v1/best?predict=1 on a miss: the shape predictor's top config for the shape, never
// measured for it; a null body when there is no model for the family and dtype or nothing fits.
PredictedAnswer predicted_answer(AppContext& context, const ProblemQuery& key) {
  if (!context.predictors) return {};
  const DeviceLimits limits = prediction_limits(context, key.device_name);
  const auto predicted = context.predictors->best_config(*key.family, key.shape, key.dtype, limits);
  if (!predicted) return {};
  nlohmann::json body = key_json(key);
  body["source"] = "predicted";
  body["template"] = predicted->template_name;
  body["config"] = to_json(predicted->config);
  body["expected_us"] = predicted->expected_us;
  body["expected_interval_us"] = {predicted->low_us, predicted->high_us};
  body["arch"] = limits.arch;
  // A config measured (so checked against the reference) on another shape of the family.
  body["validated_elsewhere"] = ShapePredictors::measured_before(
      *predicted->model, predicted->template_name, predicted->config);
  body["model"] = {{"variants", predicted->model->variants},
                   {"shapes", predicted->model->shapes},
                   {"fitted_at", predicted->model->fitted_at},
                   {"candidates_ranked", predicted->candidates}};
  JobRecord job;
  job.family = key.family->name;
  job.shape = key.shape;
  job.shape_key = key.shape_key;
  job.dtype = key.dtype;
  job.arch = limits.arch;
  VariantRecord variant;
  variant.template_name = predicted->template_name;
  variant.config = predicted->config;
  try {
    body["launch"] = variant_launch_json(*key.family, job, variant, limits.arch, limits);
  } catch (const std::exception&) {
    body["launch"] = nullptr;
  }
  const PredictedCheck check = predicted_check(context, key, limits.arch, *predicted);
  body["check"] = check_json(check);
  return {std::move(body), check.status};
}

AnswerSources answer_sources(const AppContext& context) {
  return {context.families, context.devices, context.scheduler.devices()};
}

}  // namespace

ApiResponse get_best(const ApiRequest& request, AppContext& context) {
  const ProblemQuery key = tuned_key(request, context, kBestFlags);
  const bool nearest = request.flag_param("nearest");
  const bool tune_on_miss = request.flag_param("tune_on_miss");
  const bool retune_stale = request.flag_param("retune_stale");
  const bool predict = request.flag_param("predict");
  // nearest=1: a miss answers with the nearest tuned shape's answer, flagged.
  const auto answer = best_answer(context.store, key, nearest && !predict, answer_sources(context));
  if (answer && !answer->nearest) {
    if (retune_stale && !answer->staleness.changed.empty())
      return tuning_answer(context, key, answer->staleness.stored.gpu_model,
                           best_answer_json(*answer));
    return json_response(HttpStatus::ok, best_answer_json(*answer));
  }
  // predict=1: a miss answers with the shape predictor's config ("source": "predicted"), the
  // nearest tuned shape's (nearest=1) only where there is no model.
  if (predict) {
    auto [predicted, check] = predicted_answer(context, key);
    if (predicted.is_null() && nearest) {
      const auto near = best_answer(context.store, key, true, answer_sources(context));
      if (near) predicted = best_answer_json(*near);
    }
    if (tune_on_miss) return tuning_answer(context, key, key.device_name, std::move(predicted));
    if (!predicted.is_null()) {
      // Its check moves on (queued, running, compiled) with no write to the fronts, which is all
      // a remembered /v1/best answer watches: remembered only once the check has ended.
      ApiResponse response = json_response(HttpStatus::ok, std::move(predicted));
      response.rememberable =
          check.empty() || check == "compiled" || check == "checked" || check == "failed";
      return response;
    }
    // A model that answered nothing: no config of the family's space fits the shape.
    const bool modelled =
        context.predictors && context.predictors->model(key.family->name, key.dtype);
    throw ApiError(
        HttpStatus::not_found, "not_tuned",
        "nothing tuned for " + describe(key) +
            (modelled ? " and no config of " + key.family->name +
                            "'s space fits the shape "
                            "(a tune job would have nothing to measure)" +
                            std::string(nearest ? " nor is there a comparable shape" : "")
                      : " and no shape predictor for " + key.family->name + " " + key.dtype +
                            " yet (it fits once a tune job of the family finishes)" +
                            (nearest ? " nor a comparable shape" : "") +
                            ", tune_on_miss=1 starts a job"));
  }
  // A miss. tune_on_miss=1: a job for this shape, answered 202 with the nearest answer (or null)
  // beside it.
  if (tune_on_miss)
    return tuning_answer(context, key, key.device_name,
                         answer ? best_answer_json(*answer) : nlohmann::json(nullptr));
  if (answer) return json_response(HttpStatus::ok, best_answer_json(*answer));
  throw ApiError(HttpStatus::not_found, "not_tuned",
                 "nothing tuned for " + describe(key) +
                     (nearest ? " nor for a comparable shape"
                              : "; nearest=1 answers with the nearest tuned shape") +
                     ", tune_on_miss=1 starts a job");
}

ApiResponse get_pareto(const ApiRequest& request, AppContext& context) {
  const ProblemQuery key = tuned_key(request, context);
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
  for (const JobRecord& job : page.jobs) {
    nlohmann::json view = job_to_json(job, context.store.progress(job.id));
    add_staleness(view, job, context);
    jobs.push_back(std::move(view));
  }
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

// Alive is 200 whatever the store's state: the store part says whether its database answers and
// takes writes, from memory (no query, so /healthz never waits on an unreachable database). The
// store's health tracks outages of either kind; an SQLite file's are of writes only (its readers
// keep answering), a PostgreSQL server's of both.
ApiResponse get_health(const ApiRequest&, AppContext& context) {
  const db::StoreHealthSnapshot health = context.store.health();
  const bool reads_answer = health.reachable || health.backend == "sqlite";
  nlohmann::json store = {{"backend", health.backend},
                          {"reachable", reads_answer},
                          {"writable", health.reachable},
                          {"outages", health.outages}};
  if (!health.reachable) {
    store["since"] = health.since;
    store["last_error"] = health.last_error;
  }
  return json_response(HttpStatus::ok, {{"status", "ok"},
                                        {"version", context.version},
                                        {"devices", context.devices.size()},
                                        {"families", context.families.all().size()},
                                        {"store", std::move(store)}});
}

}  // namespace kt
