// kt::Client: one HTTP request per call; list calls follow the server's pages to the end.
#include "client/kerntune_client.hpp"

#include <algorithm>
#include <cstdlib>

#include <boost/url/url.hpp>

#include "client/event_reader.hpp"

namespace kt {
namespace http = boost::beast::http;

namespace {

std::string with_query(const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& params) {
  boost::urls::url url;
  url.set_path(path);
  for (const auto& [key, value] : params) url.params().append({key, value});
  return std::string(url.buffer());
}

std::vector<std::pair<std::string, std::string>> tuned_params(const TunedQuery& query) {
  std::vector<std::pair<std::string, std::string>> params{{"family", query.family},
                                                          {"dtype", query.dtype}};
  for (const auto& [dim, extent] : query.shape) params.emplace_back(dim, std::to_string(extent));
  if (!query.device.empty()) params.emplace_back("device", query.device);
  if (query.nearest) params.emplace_back("nearest", "1");
  if (query.tune_on_miss) params.emplace_back("tune_on_miss", "1");
  if (query.predict) params.emplace_back("predict", "1");
  if (query.retune_stale) params.emplace_back("retune_stale", "1");
  return params;
}

std::map<std::string, std::int64_t> int_map(const nlohmann::json& j) {
  std::map<std::string, std::int64_t> values;
  if (!j.is_object()) return values;
  for (const auto& [key, value] : j.items())
    if (value.is_number_integer()) values[key] = value.get<std::int64_t>();
  return values;
}

std::optional<double> optional_number(const nlohmann::json& j, const char* name) {
  if (!j.contains(name) || !j.at(name).is_number()) return std::nullopt;
  return j.at(name).get<double>();
}

std::int64_t integer(const nlohmann::json& j, const char* name) {
  return j.contains(name) && j.at(name).is_number_integer() ? j.at(name).get<std::int64_t>() : 0;
}

std::string text(const nlohmann::json& j, const char* name) {
  return j.contains(name) && j.at(name).is_string() ? j.at(name).get<std::string>() : "";
}

}  // namespace

BestConfig best_config_from_json(const nlohmann::json& j) {
  BestConfig best;
  best.family = text(j, "family");
  best.dtype = text(j, "dtype");
  best.device = text(j, "device");
  best.arch = text(j, "arch");
  best.template_name = text(j, "template");
  best.shape = int_map(j.value("shape", nlohmann::json::object()));
  best.config = int_map(j.value("config", nlohmann::json::object()));
  best.median_us = optional_number(j, "median_us").value_or(0);
  best.tflops = optional_number(j, "tflops").value_or(0);
  best.gbps = optional_number(j, "gbps").value_or(0);
  best.speedup_vs_reference = optional_number(j, "speedup_vs_reference");
  best.reference_us = optional_number(j, "reference_us");
  best.job_id = integer(j, "job_id");
  best.variant_id = integer(j, "variant_id");  // null when the baseline is the answer
  best.baseline_wins = j.contains("baseline_wins") && j.at("baseline_wins").is_boolean() &&
                       j.at("baseline_wins").get<bool>();
  best.raw = j;
  return best;
}

std::string default_server_url() {
  const char* env = std::getenv("KERNTUNE_SERVER");
  return env && *env ? env : "http://127.0.0.1:8080";
}

Client::Client(const std::string& server_url, std::chrono::milliseconds timeout)
    : transport_(parse_server_url(server_url), timeout) {}

HttpReply Client::checked(http::verb method, const std::string& target,
                          const std::string& body) const {
  HttpReply reply = transport_.send(method, target, body);
  if (reply.status >= 200 && reply.status < 300) return reply;
  // The API's errors are {"error":{"code","message"}}; anything else is reported as it came.
  const auto json = nlohmann::json::parse(reply.body, nullptr, false);
  if (json.is_object() && json.contains("error") && json["error"].is_object())
    throw ClientError(reply.status, json["error"].value("code", "error"),
                      json["error"].value("message", reply.body));
  throw ClientError(reply.status, "http_error",
                    "kerntuned answered HTTP " + std::to_string(reply.status) + " to " + target +
                        (reply.body.empty() ? "" : ": " + reply.body.substr(0, 200)));
}

nlohmann::json Client::call(http::verb method, const std::string& target,
                            const std::string& body) const {
  const HttpReply reply = checked(method, target, body);
  auto json = nlohmann::json::parse(reply.body, nullptr, false);
  if (json.is_discarded())
    throw ClientError(reply.status, "bad_reply", "kerntuned answered " + target + " with non-JSON");
  return json;
}

void Client::follow_job(
    std::int64_t job_id,
    const std::function<bool(const std::string&, const nlohmann::json&)>& on_event,
    std::chrono::milliseconds idle_timeout) const {
  const std::string target = "/v1/jobs/" + std::to_string(job_id) + "/events";
  std::string error_body;
  const int status = read_event_stream(
      transport_.address(), transport_.token(), target,
      [&](const SseEvent& event) {
        auto data = nlohmann::json::parse(event.data, nullptr, false);
        if (data.is_discarded())
          throw ClientError(
              0, "bad_reply",
              "kerntuned sent a " + event.name + " event whose data is not JSON on " + target);
        return on_event(event.name, data);
      },
      idle_timeout, &error_body);
  if (status == 200) return;
  const auto json = nlohmann::json::parse(error_body, nullptr, false);
  if (json.is_object() && json.contains("error") && json["error"].is_object())
    throw ClientError(status, json["error"].value("code", "error"),
                      json["error"].value("message", error_body));
  throw ClientError(status, "http_error",
                    "kerntuned answered HTTP " + std::to_string(status) + " to " + target);
}

nlohmann::json Client::health() const {
  return call(http::verb::get, "/healthz");
}
nlohmann::json Client::families() const {
  return call(http::verb::get, "/v1/families");
}
nlohmann::json Client::devices() const {
  return call(http::verb::get, "/v1/devices");
}
nlohmann::json Client::register_family(const nlohmann::ordered_json& upload) const {
  return call(http::verb::post, "/v1/families", upload.dump());
}
nlohmann::json Client::family_registration(const std::string& id) const {
  return call(http::verb::get, "/v1/families/registrations/" + id);
}

nlohmann::json Client::submit_job(const JobSpec& spec, bool dry_run) const {
  nlohmann::json body = {
      {"family", spec.family}, {"shape", spec.shape}, {"dtype", spec.dtype}, {"mode", spec.mode}};
  if (!spec.arch.empty()) body["arch"] = spec.arch;
  if (!spec.device.empty()) body["device"] = spec.device;
  if (spec.budget != 0) body["budget"] = spec.budget;
  if (!spec.search.empty()) body["search"] = spec.search;
  if (spec.search_seconds > 0) body["search_seconds"] = spec.search_seconds;
  if (spec.search_patience > 0) body["search_patience"] = spec.search_patience;
  if (!spec.pipeline.empty()) body["pipeline"] = spec.pipeline;
  if (!spec.configs.is_null()) body["configs"] = spec.configs;
  return call(http::verb::post, dry_run ? "/v1/jobs?dry_run=1" : "/v1/jobs", body.dump());
}

nlohmann::json Client::job(std::int64_t id) const {
  return call(http::verb::get, "/v1/jobs/" + std::to_string(id));
}

nlohmann::json Client::variants_page(std::int64_t job_id, bool with_log, bool exclude_pruned,
                                     const std::string& cursor, int limit) const {
  std::vector<std::pair<std::string, std::string>> params;
  if (with_log) params.emplace_back("log", "1");
  if (exclude_pruned) params.emplace_back("exclude_pruned", "1");
  if (limit > 0) params.emplace_back("limit", std::to_string(limit));
  if (!cursor.empty()) params.emplace_back("cursor", cursor);
  return call(http::verb::get,
              with_query("/v1/jobs/" + std::to_string(job_id) + "/variants", params));
}

nlohmann::json Client::variants(std::int64_t job_id, bool with_log, bool exclude_pruned) const {
  nlohmann::json all = variants_page(job_id, with_log, exclude_pruned, "", kMaxServerPage);
  nlohmann::json next = all.value("next", nlohmann::json());
  while (next.is_string()) {
    nlohmann::json page =
        variants_page(job_id, with_log, exclude_pruned, next.get<std::string>(), kMaxServerPage);
    for (auto& variant : page["variants"]) all["variants"].push_back(std::move(variant));
    all["status"] = page.value("status", all.value("status", std::string()));
    next = page.value("next", nlohmann::json());
  }
  // "total" and "skipped" describe the whole job on every page; only "count" is per page.
  all["count"] = all["variants"].size();
  all["next"] = nullptr;
  all.erase("limit");
  return all;
}

nlohmann::json Client::cancel(std::int64_t job_id) const {
  return call(http::verb::delete_, "/v1/jobs/" + std::to_string(job_id));
}

BestConfig Client::best(const TunedQuery& query) const {
  nlohmann::json reply = best_answer(query);
  // A 202 (a job was asked for) carries the answer given meanwhile, or none.
  if (reply.contains("link") && reply.contains("answer")) {
    if (!reply["answer"].is_object())
      throw ClientError(404, "not_tuned",
                        "nothing tuned yet; tuning in " + reply["link"].get<std::string>());
    reply = reply["answer"];
  }
  return best_config_from_json(reply);
}

nlohmann::json Client::best_answer(const TunedQuery& query) const {
  return call(http::verb::get, with_query("/v1/best", tuned_params(query)));
}

std::optional<BestConfig> Client::find_best(const TunedQuery& query) const {
  try {
    return best(query);
  } catch (const ClientError& error) {
    if (error.status() == 404 && error.code() == "not_tuned") return std::nullopt;
    throw;
  }
}

nlohmann::json Client::pareto(const TunedQuery& query) const {
  return call(http::verb::get, with_query("/v1/pareto", tuned_params(query)));
}

nlohmann::json Client::history(const HistoryQuery& query) const {
  nlohmann::json all = {{"limit", query.limit},
                        {"offset", query.offset},
                        {"count", 0},
                        {"next", nullptr},
                        {"jobs", nlohmann::json::array()}};
  std::string cursor;
  while (static_cast<int>(all["jobs"].size()) < query.limit) {
    const int wanted = query.limit - static_cast<int>(all["jobs"].size());
    std::vector<std::pair<std::string, std::string>> params{
        {"limit", std::to_string(std::min(wanted, kMaxServerPage))}};
    if (cursor.empty() && query.offset > 0)
      params.emplace_back("offset", std::to_string(query.offset));
    if (!cursor.empty()) params.emplace_back("cursor", cursor);
    if (!query.family.empty()) params.emplace_back("family", query.family);
    if (!query.status.empty()) params.emplace_back("status", query.status);
    nlohmann::json page = call(http::verb::get, with_query("/v1/history", params));
    for (auto& job : page["jobs"]) all["jobs"].push_back(std::move(job));
    all["next"] = page.value("next", nlohmann::json());
    if (!all["next"].is_string()) break;
    cursor = all["next"].get<std::string>();
  }
  all["count"] = all["jobs"].size();
  return all;
}

std::vector<char> Client::fetch_kernel(std::int64_t variant_id) const {
  const HttpReply reply =
      checked(http::verb::get, "/v1/variants/" + std::to_string(variant_id) + "/kernel", "");
  return std::vector<char>(reply.body.begin(), reply.body.end());
}

}  // namespace kt
