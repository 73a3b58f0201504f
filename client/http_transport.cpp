#include "client/http_transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/dynamic_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

namespace kt {
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

// Kernels (cubins) come back through the same path; a response larger than this is a fault.
constexpr std::uint64_t kMaxReplyBytes = 512ull << 20;

ClientError unreachable(const ServerAddress& address, const std::string& why) {
  return ClientError(0, "unreachable", "cannot reach kerntuned at " + address.url + ": " + why);
}

}  // namespace

ServerAddress parse_server_url(const std::string& url) {
  std::string text = url;
  if (text.find("://") == std::string::npos) text = "http://" + text;
  auto parsed = boost::urls::parse_uri(text);
  if (!parsed)
    throw ClientError(0, "bad_url", "bad server URL '" + url + "': " + parsed.error().message());
  if (parsed->scheme() != "http")
    throw ClientError(0, "bad_url", "bad server URL '" + url + "': only http:// is supported");
  ServerAddress address;
  address.url = url;
  address.host = parsed->host_address();
  if (address.host.empty())
    throw ClientError(0, "bad_url", "bad server URL '" + url + "': no host");
  // Brackets belong to the URL, not to the address the resolver wants.
  if (address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);
  address.port = parsed->has_port() ? std::string(parsed->port()) : "80";
  return address;
}

HttpTransport::HttpTransport(ServerAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

HttpReply HttpTransport::send(http::verb method, const std::string& target,
                              const std::string& body) const {
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  http::request<http::string_body> request{method, target, 11};
  request.set(http::field::host, address_.host + ":" + address_.port);
  request.set(http::field::user_agent, "kerntune-client");
  request.set(http::field::accept, "application/json");
  if (!body.empty() || method == http::verb::post) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.keep_alive(false);
  request.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxReplyBytes);

  // The exchange runs as async steps on a private io_context so the deadline covers all of it.
  beast::error_code failure;
  std::string failed_step;
  auto fail = [&](const char* step, beast::error_code ec) {
    failure = ec;
    failed_step = step;
  };
  resolver.async_resolve(
      address_.host, address_.port, [&](beast::error_code ec, tcp::resolver::results_type hosts) {
        if (ec) return fail("resolve", ec);
        stream.expires_after(timeout_);
        stream.async_connect(hosts, [&](beast::error_code ec, const tcp::endpoint&) {
          if (ec) return fail("connect", ec);
          http::async_write(stream, request, [&](beast::error_code ec, std::size_t) {
            // A server refusing an oversized body may close early; its answer is still readable.
            if (ec && ec != boost::asio::error::broken_pipe &&
                ec != boost::asio::error::connection_reset)
              return fail("send", ec);
            http::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) {
              if (ec) return fail("receive", ec);
            });
          });
        });
      });
  io.run();

  if (failure) {
    if (failure == beast::error::timeout)
      throw ClientError(0, "timeout",
                        "kerntuned at " + address_.url + " did not answer within " +
                            std::to_string(timeout_.count()) + " ms (" + failed_step + ")");
    if (failed_step == "resolve" || failed_step == "connect")
      throw unreachable(address_, failure.message());
    throw ClientError(0, "bad_reply",
                      "exchange with kerntuned at " + address_.url + " failed (" + failed_step +
                          "): " + failure.message());
  }
  const auto& response = parser.get();
  HttpReply reply;
  reply.status = static_cast<int>(response.result_int());
  reply.content_type = std::string(response[http::field::content_type]);
  reply.body = response.body();
  return reply;
}

}  // namespace kt
