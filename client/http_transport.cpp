// One HTTP exchange with kerntuned (see the header), the parsing of --server URLs and where the
// bearer token comes from.
#include "client/http_transport.hpp"

#include <cstdlib>
#include <fstream>

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

constexpr std::string_view kWhitespace = " \t\r\n\v\f";

std::string trimmed(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(kWhitespace) - first + 1));
}

// A control character (a stray CR or LF above all) would break or inject into the header.
std::string checked_token(std::string token, const std::string& source) {
  for (const char c : token)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw ClientError(0, "bad_token", "the token from " + source + " holds a control character");
  return token;
}

}  // namespace

std::string read_access_token_file(const std::filesystem::path& path) {
  const std::string source = "token file " + path.string();
  std::ifstream in(path);
  if (!in) throw ClientError(0, "bad_token", source + " cannot be read");
  std::string first_line;
  std::getline(in, first_line);
  std::string token = trimmed(first_line);
  if (token.empty())
    throw ClientError(0, "bad_token", source + " holds no token on its first line");
  return checked_token(std::move(token), source);
}

std::string access_token_from_environment() {
  if (const char* token = std::getenv("KERNTUNE_TOKEN"); token && *token)
    return checked_token(trimmed(token), "$KERNTUNE_TOKEN");
  if (const char* file = std::getenv("KERNTUNE_TOKEN_FILE"); file && *file)
    return read_access_token_file(file);
  return {};
}

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

HttpTransport::HttpTransport(ServerAddress address, std::chrono::milliseconds timeout,
                             std::string token)
    : address_(std::move(address)), timeout_(timeout), token_(std::move(token)) {}

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
  if (!token_.empty()) request.set(http::field::authorization, "Bearer " + token_);
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
  for (const auto& field : response)
    reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  return reply;
}

}  // namespace kt
