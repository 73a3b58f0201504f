// One HTTP/1.1 exchange with kerntuned over a fresh TCP connection, with a deadline over the
// whole exchange. Transport failures become ClientError with status 0 and a message that names
// the server URL. Every request carries "Authorization: Bearer <token>" when a token is known
// (a kerntuned off loopback, or started with --token-file, requires it).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/verb.hpp>

#include "client/client_error.hpp"

namespace kt {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // all of them, as sent
};

struct ServerAddress {
  std::string url;  // as given, for messages
  std::string host;
  std::string port;
};

// Accepts "http://host:port", "host:port" and "http://host" (port 80); throws ClientError
// (code "bad_url") for anything else, https included.
ServerAddress parse_server_url(const std::string& url);

// The first line of the file, without surrounding whitespace; ClientError (code "bad_token")
// naming the path when it cannot be read or holds no usable token.
std::string read_access_token_file(const std::filesystem::path& path);

// $KERNTUNE_TOKEN if set and not empty, else the token in the file $KERNTUNE_TOKEN_FILE names,
// else "" (send no Authorization header). Throws like read_access_token_file.
std::string access_token_from_environment();

class HttpTransport {
 public:
  // token: sent as "Authorization: Bearer <token>" on every request; "" sends none.
  HttpTransport(ServerAddress address, std::chrono::milliseconds timeout,
                std::string token = access_token_from_environment());
  // Sends the request and returns the reply of any status; throws ClientError (status 0) when
  // the server cannot be reached or the exchange fails or times out.
  HttpReply send(boost::beast::http::verb method, const std::string& target,
                 const std::string& body = "") const;
  const ServerAddress& address() const { return address_; }
  const std::string& token() const { return token_; }

 private:
  ServerAddress address_;
  std::chrono::milliseconds timeout_;
  std::string token_;
};

}  // namespace kt
