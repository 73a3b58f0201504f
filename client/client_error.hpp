// What every kerntune client call throws when it does not get what it asked for: the HTTP status
// (0 when the daemon was not reached), the API's error code and its message.
#pragma once

#include <stdexcept>
#include <string>

namespace kt {

class ClientError : public std::runtime_error {
 public:
  ClientError(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(std::move(code)) {}
  // HTTP status of the refusal; 0 for transport failures (unreachable, timeout, bad reply).
  int status() const { return status_; }
  // The API's error code ("unknown_family", "not_tuned", ...) or "unreachable", "timeout",
  // "bad_url", "bad_reply" for client-side failures.
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

}  // namespace kt
