#include "client/event_reader.hpp"

#include <array>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace kt {
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
  std::vector<SseEvent> out;
  for (const char c : bytes) {
    if (c == '\n') {
      std::string_view text(partial_line_);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      line(text, out);
      partial_line_.clear();
    } else {
      partial_line_ += c;
    }
  }
  return out;
}

void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
  if (text.empty()) {  // a blank line dispatches the event
    if (has_data_) out.push_back(std::move(current_));
    current_ = {};
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // a comment: the heartbeat
  const std::size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    current_.name = std::string(value);
  } else if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data += value;
    has_data_ = true;
  }
}

int read_event_stream(const ServerAddress& address, const std::string& token,
                      const std::string& target,
                      const std::function<bool(const SseEvent&)>& on_event,
                      std::chrono::milliseconds idle_timeout, std::string* error_body) {
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  // Each step runs alone on the private io_context, under the idle timeout.
  beast::error_code failure;
  const auto run = [&](const char* step) {
    io.run();
    io.restart();
    if (!failure) return;
    if (failure == beast::error::timeout)
      throw ClientError(0, "timeout",
                        "kerntuned at " + address.url + " sent nothing for " +
                            std::to_string(idle_timeout.count()) + " ms (" + step + ")");
    if (std::string_view(step) == "connect")
      throw ClientError(0, "unreachable",
                        "cannot reach kerntuned at " + address.url + ": " + failure.message());
    throw ClientError(0, "bad_reply",
                      "event stream from kerntuned at " + address.url + " failed (" + step +
                          "): " + failure.message());
  };

  tcp::resolver::results_type hosts;
  resolver.async_resolve(address.host, address.port,
                         [&](beast::error_code ec, tcp::resolver::results_type found) {
                           failure = ec;
                           hosts = std::move(found);
                         });
  run("connect");
  stream.expires_after(idle_timeout);
  stream.async_connect(hosts, [&](beast::error_code ec, const tcp::endpoint&) { failure = ec; });
  run("connect");

  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, address.host + ":" + address.port);
  request.set(http::field::user_agent, "kerntune-client");
  request.set(http::field::accept, "text/event-stream");
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  stream.expires_after(idle_timeout);
  http::async_write(stream, request, [&](beast::error_code ec, std::size_t) { failure = ec; });
  run("send");

  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);  // a stream has no length: it ends when the server closes it
  stream.expires_after(idle_timeout);
  http::async_read_header(stream, buffer, parser,
                          [&](beast::error_code ec, std::size_t) { failure = ec; });
  run("receive");
  const int status = static_cast<int>(parser.get().result_int());
  if (status != 200) {
    // An error answer is short JSON: read it whole for the caller's message.
    http::response_parser<http::string_body> whole(std::move(parser));
    stream.expires_after(idle_timeout);
    http::async_read(stream, buffer, whole, [&](beast::error_code ec, std::size_t) {
      if (ec != http::error::end_of_stream) failure = ec;
    });
    run("receive");
    if (error_body) *error_body = whole.get().body();
    return status;
  }

  SseParser sse;
  std::array<char, 8192> chunk{};
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_after(idle_timeout);
    http::async_read_some(stream, buffer, parser, [&](beast::error_code ec, std::size_t) {
      if (ec != http::error::need_buffer) failure = ec;
    });
    run("receive");
    const std::size_t got = chunk.size() - parser.get().body().size;
    for (const SseEvent& event : sse.feed(std::string_view(chunk.data(), got)))
      if (!on_event(event)) return status;
  }
  return status;
}

}  // namespace kt
