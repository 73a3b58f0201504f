// Maps (method, path pattern) to a handler. Patterns are "/"-separated segments where "{name}"
// captures one segment: "/v1/jobs/{id}/variants". No match for the path is a 404, a path that
// matches with another method a 405 with an Allow header; a handler's ApiError becomes its JSON
// error response. HEAD runs the path's GET handler: the session sends its headers, not its body.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
  // A flag parameter: absent = false; 1, true or bare = true; 0 or false = false; anything else
  // is a 400 naming it.
  bool flag_param(const std::string& name) const;
};

using Handler = std::function<ApiResponse(const ApiRequest&, AppContext&)>;
// A route's answer from memory (no store query, nothing that waits), or nullopt when only its
// handler can answer.
using MemoryAnswer = std::function<std::optional<ApiResponse>(const ApiRequest&, AppContext&)>;

// Where a handler runs: on the I/O thread when it touches neither the store nor anything else
// that can wait (/healthz), else on the query pool, so an I/O thread never waits on a query.
enum class RunOn { query_pool, io_thread };

class Router {
 public:
  void add(boost::beast::http::verb method, const std::string& pattern, Handler handler,
           RunOn run_on = RunOn::query_pool);
  // A query-pool route whose answer may already be in memory: from_memory is tried on the I/O
  // thread first, the handler runs on the pool when it has none.
  void add(boost::beast::http::verb method, const std::string& pattern, Handler handler,
           MemoryAnswer from_memory);
  // Never throws: every failure becomes a JSON error response.
  ApiResponse dispatch(const HttpRequest& request, AppContext& context) const;
  // True for a route added with RunOn::io_thread, and for requests answered without a handler
  // (a malformed target, no such path or method).
  bool runs_on_io_thread(const HttpRequest& request) const;
  // The pattern of the route that serves the request ("/v1/jobs/{id}"), "" when none does (no
  // such path or method, a malformed target): what the request metrics are labelled with.
  std::string pattern_of(const HttpRequest& request) const;
  // Every (method, pattern) added, in order: what the OpenAPI conformance test checks.
  std::vector<std::pair<boost::beast::http::verb, std::string>> routes() const;
  // The answer when it can be given on the I/O thread: a RunOn::io_thread route's, a route's
  // memory answer, or the error for a request no handler serves. nullopt: dispatch() it on the
  // query pool. Never throws.
  std::optional<ApiResponse> answer_on_io_thread(const HttpRequest& request,
                                                 AppContext& context) const;

 private:
  struct Route {
    boost::beast::http::verb method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
    RunOn run_on;
    MemoryAnswer from_memory;  // may be empty
  };
  static bool match(const Route& route, const std::vector<std::string>& segments,
                    std::map<std::string, std::string>& captured);
  ApiResponse route(const HttpRequest& request, AppContext& context) const;

  std::vector<Route> routes_;
};

}  // namespace kt
