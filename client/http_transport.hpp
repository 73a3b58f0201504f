// One HTTP/1.1 exchange with kerntuned over a fresh TCP connection, with a deadline over the
// whole exchange. Transport failures become ClientError with status 0 and a message that names
// the server URL.
#pragma once

#include <chrono>
#include <string>

#include <boost/beast/http/verb.hpp>

#include "client/client_error.hpp"

namespace kt {

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct ServerAddress {
  std::string url;  // as given, for messages
  std::string host;
  std::string port;
};

// Accepts "http://host:port", "host:port" and "http://host" (port 80); throws ClientError
// (code "bad_url") for anything else, https included.
ServerAddress parse_server_url(const std::string& url);

class HttpTransport {
 public:
  HttpTransport(ServerAddress address, std::chrono::milliseconds timeout);
  // Sends the request and returns the reply of any status; throws ClientError (status 0) when
  // the server cannot be reached or the exchange fails or times out.
  HttpReply send(boost::beast::http::verb method, const std::string& target,
                 const std::string& body = "") const;
  const ServerAddress& address() const { return address_; }

 private:
  ServerAddress address_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kt
