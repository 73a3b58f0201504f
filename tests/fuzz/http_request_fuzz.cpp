// libFuzzer target: bytes as a client sends them to kerntuned. They go through what a session does
// with a connection's first request: a Beast request_parser with the daemon's header and body
// limits, the HTTP/1.1 Host rule, check_access, the API router and handlers (on the shared
// AppContext: fuzz_app.hpp) and the response message written out. The router never throws; an
// exception a handler does not document comes back as 500 "internal", which fails the run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "fuzz/fuzz_app.hpp"
#include "server/access_control.hpp"
#include "server/api_routes.hpp"
#include "server/session.hpp"

namespace {

namespace http = boost::beast::http;
using RequestParser = http::request_parser<http::string_body>;

constexpr unsigned kHttp11 = 11;

// True when the bytes start with one complete request (what follows it is left unread, as the
// session leaves a pipelined request for its next read).
bool parse_request(const std::uint8_t* data, std::size_t size, RequestParser& parser) {
  parser.header_limit(kt::kMaxRequestHeaderBytes);
  parser.body_limit(kt::kDefaultMaxBodyBytes);
  parser.eager(true);
  std::size_t used = 0;
  while (!parser.is_done()) {
    boost::beast::error_code ec;
    const std::size_t n = parser.put(boost::asio::const_buffer(data + used, size - used), ec);
    used += n;
    if (!ec && n > 0) continue;  // the header is done; the body follows in the same bytes
    if (ec == http::error::need_more || !ec) {
      // Every byte there is has been offered, and need_more asks for bytes beyond them (Beast's
      // chunk parser asserts if offered the same ones again): the connection ends here. With
      // nothing received Beast's read reports end_of_stream without asking the parser (put_eof
      // asserts got_some).
      if (!parser.got_some()) return false;
      parser.put_eof(ec);
      return !ec && parser.is_done();
    }
    return false;
  }
  return true;
}

// Access checks of a daemon with a token file, with and without --public-reads: only their
// answer is computed (the shared context stays open so that every request reaches the router).
void check_token_policies(const kt::HttpRequest& request) {
  static const kt::AccessPolicy kTokenOnly{"fuzz-token", false};
  static const kt::AccessPolicy kPublicReads{"fuzz-token", true};
  (void)kt::check_access(request, kTokenOnly);
  (void)kt::check_access(request, kPublicReads);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kt::Router router = kt::make_api_router();
  kt::AppContext& context = kt::fuzz::app_context();

  RequestParser parser;
  if (!parse_request(data, size, parser)) return 0;
  const kt::HttpRequest& request = parser.get();
  // The session answers these 400 itself, before any check or route.
  if (request.version() >= kHttp11 && request.count(http::field::host) != 1) return 0;

  check_token_policies(request);
  std::optional<kt::ApiResponse> denied = kt::check_access(request, context.access);
  kt::ApiResponse api = denied ? std::move(*denied) : router.dispatch(request, context);
  if (api.status == kt::HttpStatus::internal_server_error) {
    std::fprintf(stderr, "http_request: 500 from an undocumented exception: %s\n",
                 api.body.c_str());
    std::abort();
  }
  std::ostringstream wire;
  wire << kt::to_http_response(std::move(api), request.version(), request.keep_alive(),
                               request.method() == http::verb::head);
  return 0;
}
