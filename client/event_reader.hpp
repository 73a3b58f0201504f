// Reading a Server-Sent Events stream from kerntuned (GET /v1/jobs/{id}/events): one connection,
// the events handed to a callback as they arrive, until the server closes the stream (after the
// job's "end" event) or the callback says stop. The parsing is separate (SseParser) so it can be
// checked without a server.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "client/http_transport.hpp"

namespace kt {

struct SseEvent {
  std::string name = "message";  // the "event:" field; "message" when there is none
  std::string data;              // the "data:" lines joined with "\n"
};

// Splits an event stream into events as its bytes come in (any chunking). Comments (": ...",
// the heartbeats) and fields other than event and data are skipped.
class SseParser {
 public:
  // The events completed by these bytes.
  std::vector<SseEvent> feed(std::string_view bytes);

 private:
  void line(std::string_view text, std::vector<SseEvent>& out);
  std::string partial_line_;
  SseEvent current_;
  bool has_data_ = false;
};

// Calls on_event for each event of GET target until the server closes the stream or on_event
// returns false. idle_timeout bounds the connect and each wait for bytes (the server's heartbeats
// keep a live stream well under it). Returns the HTTP status: 200 when the stream was read to its
// end; any other status with no event read (its body in *error_body when given). Throws
// ClientError (status 0) when the server cannot be reached or the stream breaks.
int read_event_stream(const ServerAddress& address, const std::string& token,
                      const std::string& target,
                      const std::function<bool(const SseEvent&)>& on_event,
                      std::chrono::milliseconds idle_timeout, std::string* error_body = nullptr);

}  // namespace kt
