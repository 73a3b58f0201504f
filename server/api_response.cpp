#include "server/api_response.hpp"

namespace kt {

ApiResponse json_response(HttpStatus status, const nlohmann::json& body) {
  ApiResponse response;
  response.status = status;
  // Replace invalid UTF-8 (compile logs can hold anything) rather than throw mid-response.
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

ApiResponse error_response(HttpStatus status, const std::string& code, const std::string& message) {
  return json_response(status, {{"error", {{"code", code}, {"message", message}}}});
}

}  // namespace kt
