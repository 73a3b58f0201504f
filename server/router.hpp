// Maps (method, path pattern) to a handler. Patterns are "/"-separated segments where "{name}"
// captures one segment: "/v1/jobs/{id}/variants". No match for the path is a 404, a path that
// matches with another method a 405 with an Allow header; a handler's ApiError becomes its JSON
// error response. HEAD runs the path's GET handler: the session sends its headers, not its body.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include "server/api_response.hpp"

namespace kt {

struct AppContext;

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

// One routed request: the HTTP message, the captured path segments and the decoded query.
struct ApiRequest {
  const HttpRequest& http;
  std::map<std::string, std::string> path_params;
  std::map<std::string, std::string> query;  // a repeated key keeps its last value

  // nullopt when the parameter is absent.
  std::optional<std::string> query_param(const std::string& name) const;
};

using Handler = std::function<ApiResponse(const ApiRequest&, AppContext&)>;

class Router {
 public:
  void add(boost::beast::http::verb method, const std::string& pattern, Handler handler);
  // Never throws: every failure becomes a JSON error response.
  ApiResponse dispatch(const HttpRequest& request, AppContext& context) const;

 private:
  struct Route {
    boost::beast::http::verb method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
  };
  static bool match(const Route& route, const std::vector<std::string>& segments,
                    std::map<std::string, std::string>& captured);
  ApiResponse route(const HttpRequest& request, AppContext& context) const;

  std::vector<Route> routes_;
};

}  // namespace kt
