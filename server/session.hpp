// One HTTP connection: read a request (with a read timeout, a header limit and a body limit), route
// it, write the response, and read the next while the client keeps the connection alive. Sessions
// own themselves through shared_ptr captured by every pending handler. Over-size headers answer
// 431, an over-size body 413, an HTTP/1.1 request without exactly one Host 400, a
// Transfer-Encoding other than chunked 400 or 501 (and the connection closes); a HEAD request
// gets its GET route's headers without the body.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/event_stream.hpp"
#include "server/router.hpp"

namespace kt {

// The request line and header fields together; Beast's own default, stated here so the 431 the
// API documents has one source (docs/api.md).
inline constexpr std::uint32_t kMaxRequestHeaderBytes = 8 * 1024;

struct SessionSettings {
  const Router* router = nullptr;
  AppContext* context = nullptr;
  std::chrono::seconds read_timeout{30};
  // Runs the handlers of RunOn::query_pool routes; null runs every handler on the I/O thread.
  boost::asio::thread_pool* queries = nullptr;
  // The cap on open event streams (null: none may open) and how they behave.
  std::shared_ptr<EventStreamSlots> event_slots = nullptr;
  EventStreamSettings event_streams = {};
};

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// The HTTP message for a handler's answer to a request of the given version and keep-alive. For a
// HEAD request (head_only) it carries the Content-Length of the body it leaves out.
HttpResponse to_http_response(ApiResponse api, unsigned version, bool keep_alive,
                              bool head_only = false);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket&& socket, SessionSettings settings);
  void start();

 private:
  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  // Logs the answer to the request just read and sends it (on the connection's strand).
  void answer(ApiResponse api, std::chrono::steady_clock::time_point started);
  void send_response(HttpResponse response);
  // GET /v1/jobs/{id}/events found its job: the connection becomes its event stream, or is
  // answered 503 when the streams are at their cap.
  void start_event_stream(ApiResponse api);
  // HEAD /v1/jobs/{id}/events found its job: the stream's headers (or the 503), no body.
  void answer_event_stream_head();
  // Refuse the request just read (or not read to its end) and close once the answer is sent.
  void refuse(HttpStatus status, const std::string& code, const std::string& message);
  void on_write(bool close, boost::beast::error_code ec, std::size_t bytes);
  // After refusing a request whose body was not read: stop sending, read and drop what the
  // client still sends (so it sees our answer instead of a reset), then close.
  void drain();
  void drain_some();
  void do_close();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  SessionSettings settings_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  HttpResponse response_;
  bool drain_after_write_ = false;
  std::chrono::steady_clock::time_point drain_deadline_;
  std::array<char, 16384> drain_buffer_{};
};

}  // namespace kt
