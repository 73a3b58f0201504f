// Matching (method, path) to a handler. HEAD is answered by the GET route of the path (the session
// drops the body), so every 405's Allow lists HEAD wherever it lists GET.
#include "server/router.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "db/store_health.hpp"
#include "server/request_parsing.hpp"

namespace kt {
namespace http = boost::beast::http;

namespace {

std::vector<std::string> split_pattern(const std::string& pattern) {
  std::vector<std::string> segments;
  if (pattern == "/") return segments;  // the root has no segment, as a parsed "/" has none
  std::size_t pos = 1;                  // patterns start with '/'
  while (pos <= pattern.size()) {
    std::size_t end = pattern.find('/', pos);
    if (end == std::string::npos) end = pattern.size();
    segments.push_back(pattern.substr(pos, end - pos));
    pos = end + 1;
  }
  return segments;
}

bool is_capture(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// A GET route also answers HEAD (RFC 9110: HEAD is GET without the body).
bool serves(http::verb route_method, http::verb request_method) {
  return route_method == request_method ||
         (route_method == http::verb::get && request_method == http::verb::head);
}

void add_allowed(std::vector<std::string>& allowed, http::verb method) {
  const auto add = [&](http::verb verb) {
    const std::string name(http::to_string(verb));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) allowed.push_back(name);
  };
  add(method);
  if (method == http::verb::get) add(http::verb::head);
}

}  // namespace

std::optional<std::string> ApiRequest::query_param(const std::string& name) const {
  const auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

bool ApiRequest::flag_param(const std::string& name) const {
  const auto value = query_param(name);
  if (!value) return false;
  if (*value == "1" || *value == "true" || value->empty()) return true;
  if (*value == "0" || *value == "false") return false;
  throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                 "query parameter " + quote_client_text(name) + " must be 1/true or 0/false, got " +
                     quote_client_text(*value));
}

void Router::add(http::verb method, const std::string& pattern, Handler handler, RunOn run_on) {
  routes_.push_back(Route{method, pattern, split_pattern(pattern), std::move(handler), run_on, {}});
}

void Router::add(http::verb method, const std::string& pattern, Handler handler,
                 MemoryAnswer from_memory) {
  routes_.push_back(Route{method, pattern, split_pattern(pattern), std::move(handler),
                          RunOn::query_pool, std::move(from_memory)});
}

std::optional<ApiResponse> Router::answer_on_io_thread(const HttpRequest& request,
                                                       AppContext& context) const {
  const std::string target(request.target());  // the url_view points into it
  auto parsed = boost::urls::parse_origin_form(target);
  if (!parsed) return dispatch(request, context);
  std::vector<std::string> segments;
  for (const auto& segment : parsed->segments()) segments.push_back(segment);
  for (const Route& candidate : routes_) {
    std::map<std::string, std::string> captured;
    if (!match(candidate, segments, captured) || !serves(candidate.method, request.method()))
      continue;
    if (candidate.run_on == RunOn::io_thread) return dispatch(request, context);
    if (!candidate.from_memory) return std::nullopt;
    try {
      const db::FailFastOnOutage fail_fast;
      ApiRequest api{request, std::move(captured), {}};
      for (const auto& param : parsed->params()) api.query[param.key] = param.value;
      return candidate.from_memory(api, context);
    } catch (const std::exception& error) {
      spdlog::debug("{}: no answer from memory: {}", target, error.what());
      return std::nullopt;  // the handler runs and reports it
    }
  }
  return dispatch(request, context);  // 404 or 405, without a handler
}

std::vector<std::pair<http::verb, std::string>> Router::routes() const {
  std::vector<std::pair<http::verb, std::string>> all;
  for (const Route& route : routes_) all.emplace_back(route.method, route.pattern);
  return all;
}

bool Router::runs_on_io_thread(const HttpRequest& request) const {
  const std::string target(request.target());  // the url_view points into it
  auto parsed = boost::urls::parse_origin_form(target);
  if (!parsed) return true;
  std::vector<std::string> segments;
  for (const auto& segment : parsed->segments()) segments.push_back(segment);
  for (const Route& candidate : routes_) {
    std::map<std::string, std::string> captured;
    if (match(candidate, segments, captured) && serves(candidate.method, request.method()))
      return candidate.run_on == RunOn::io_thread;
  }
  return true;
}

bool Router::match(const Route& route, const std::vector<std::string>& segments,
                   std::map<std::string, std::string>& captured) {
  if (route.segments.size() != segments.size()) return false;
  std::map<std::string, std::string> values;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& want = route.segments[i];
    if (is_capture(want)) {
      if (segments[i].empty()) return false;
      values[want.substr(1, want.size() - 2)] = segments[i];
    } else if (want != segments[i]) {
      return false;
    }
  }
  captured = std::move(values);
  return true;
}

std::string Router::pattern_of(const HttpRequest& request) const {
  const std::string target(request.target());
  auto parsed = boost::urls::parse_origin_form(target);
  if (!parsed) return "";
  std::vector<std::string> segments;
  for (const auto& segment : parsed->segments()) segments.push_back(segment);
  for (const Route& candidate : routes_) {
    std::map<std::string, std::string> captured;
    if (match(candidate, segments, captured) && serves(candidate.method, request.method()))
      return candidate.pattern;
  }
  return "";
}

ApiResponse Router::dispatch(const HttpRequest& request, AppContext& context) const {
  // A request never waits out an outage of the database: it is answered 503 at once.
  const db::FailFastOnOutage fail_fast;
  try {
    return route(request, context);
  } catch (const ApiError& error) {
    return error_response(error.status(), error.code(), error.what());
  } catch (const StoreUnavailable& error) {
    return error_response(HttpStatus::service_unavailable, "store_unavailable", error.what());
  } catch (const std::exception& error) {
    spdlog::error("{} {}: {}", std::string(request.method_string()), std::string(request.target()),
                  error.what());
    return error_response(HttpStatus::internal_server_error, "internal", error.what());
  }
}

ApiResponse Router::route(const HttpRequest& request, AppContext& context) const {
  const std::string target(request.target());
  auto parsed = boost::urls::parse_origin_form(target);
  if (!parsed)
    throw ApiError(
        HttpStatus::bad_request, "bad_target",
        "malformed request target " + quote_client_text(target) + ": " + parsed.error().message());
  const boost::urls::url_view url = *parsed;

  std::vector<std::string> segments;
  for (const auto& segment : url.segments()) segments.push_back(segment);

  std::vector<std::string> allowed;
  for (const Route& candidate : routes_) {
    std::map<std::string, std::string> captured;
    if (!match(candidate, segments, captured)) continue;
    if (!serves(candidate.method, request.method())) {
      add_allowed(allowed, candidate.method);
      continue;
    }
    ApiRequest api{request, std::move(captured), {}};
    for (const auto& param : url.params()) api.query[param.key] = param.value;
    return candidate.handler(api, context);
  }
  const std::string path = url.path();
  if (allowed.empty())
    throw ApiError(HttpStatus::not_found, "not_found",
                   "no such endpoint: " + quote_client_text(path));
  std::string allow;
  for (const auto& method : allowed) allow += (allow.empty() ? "" : ", ") + method;
  ApiResponse response =
      error_response(HttpStatus::method_not_allowed, "method_not_allowed",
                     quote_client_text(request.method_string()) + " is not allowed on " +
                         quote_client_text(path) + " (allowed: " + allow + ")");
  response.headers.emplace_back("Allow", allow);
  return response;
}

}  // namespace kt
