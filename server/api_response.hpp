// What a handler answers, before the session turns it into an HTTP message: a status, a content
// type and a body (JSON for everything but kernel downloads). Kept free of socket types so
// handlers can be called and checked directly in unit tests.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>

namespace kt {

struct JobSnapshot;

using HttpStatus = boost::beast::http::status;

struct ApiResponse {
  HttpStatus status = HttpStatus::ok;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Location, ...)
  // Set by GET /v1/jobs/{id}/events: the session turns the connection into that job's event
  // stream (server/event_stream.hpp), starting from this state, instead of sending the body.
  std::shared_ptr<const JobSnapshot> event_stream;
  // False for an answer that changes without a store write its route's answer cache watches (a
  // predicted answer whose check is still open): it is not remembered (server/answer_cache.hpp).
  bool rememberable = true;

  // The body parsed as JSON (for tests and logging); throws if it is not JSON.
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

// A request the API refuses: thrown by handlers, turned into {"error":{"code","message"}} with
// the given status by the router.
class ApiError : public std::runtime_error {
 public:
  ApiError(HttpStatus status, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(std::move(code)) {}
  HttpStatus status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  HttpStatus status_;
  std::string code_;
};

ApiResponse json_response(HttpStatus status, const nlohmann::json& body);
// {"error":{"code":code,"message":message}}
ApiResponse error_response(HttpStatus status, const std::string& code, const std::string& message);

}  // namespace kt
