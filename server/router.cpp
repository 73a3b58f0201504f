#include "server/router.hpp"

#include <spdlog/spdlog.h>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace kt {
namespace http = boost::beast::http;

namespace {

std::vector<std::string> split_pattern(const std::string& pattern) {
  std::vector<std::string> segments;
  std::size_t pos = 1;  // patterns start with '/'
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

}  // namespace

std::optional<std::string> ApiRequest::query_param(const std::string& name) const {
  const auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

void Router::add(http::verb method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, pattern, split_pattern(pattern), std::move(handler)});
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

ApiResponse Router::dispatch(const HttpRequest& request, AppContext& context) const {
  try {
    return route(request, context);
  } catch (const ApiError& error) {
    return error_response(error.status(), error.code(), error.what());
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
    throw ApiError(HttpStatus::bad_request, "bad_target",
                   "malformed request target '" + target + "': " + parsed.error().message());
  const boost::urls::url_view url = *parsed;

  std::vector<std::string> segments;
  for (const auto& segment : url.segments()) segments.push_back(segment);

  std::vector<std::string> allowed;
  for (const Route& candidate : routes_) {
    std::map<std::string, std::string> captured;
    if (!match(candidate, segments, captured)) continue;
    if (candidate.method != request.method()) {
      allowed.emplace_back(http::to_string(candidate.method));
      continue;
    }
    ApiRequest api{request, std::move(captured), {}};
    for (const auto& param : url.params()) api.query[param.key] = param.value;
    return candidate.handler(api, context);
  }
  const std::string path = url.path();
  if (allowed.empty())
    throw ApiError(HttpStatus::not_found, "not_found", "no such endpoint: " + path);
  std::string allow;
  for (const auto& method : allowed) allow += (allow.empty() ? "" : ", ") + method;
  ApiResponse response =
      error_response(HttpStatus::method_not_allowed, "method_not_allowed",
                     std::string(request.method_string()) + " is not allowed on " + path +
                         " (allowed: " + allow + ")");
  response.headers.emplace_back("Allow", allow);
  return response;
}

}  // namespace kt
