// The connection's read/route/write loop and the HTTP-level refusals (413, 431, 400, and 401
// from the access check) that happen before a request reaches the router.
#include "server/session.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "server/access_control.hpp"
#include "server/request_parsing.hpp"
#include "server/result_keys_view.hpp"
#include "tuner/text.hpp"

namespace kt {
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

constexpr auto kDrainTimeout = std::chrono::seconds(5);
constexpr unsigned kHttp11 = 11;

// Why a request's Transfer-Encoding cannot frame its body, or nullopt when it can (none, or
// exactly chunked). RFC 9112 6.1 and 6.3: the codings are a list (over one or more fields) whose
// last must be chunked, applied once; any other coding is one the daemon does not decode (501).
// Beast frames a body as chunked whenever chunked comes last and as none otherwise, so the
// session refuses such a request and closes: what Beast did not read as its body is not a request.
struct TransferCodingProblem {
  HttpStatus status;
  std::string code;
  std::string message;
};

std::optional<TransferCodingProblem> transfer_coding_problem(const HttpRequest& request) {
  std::vector<std::string> codings;
  bool any_field = false;
  const auto [first, last] = request.equal_range(http::field::transfer_encoding);
  for (auto field = first; field != last; ++field) {
    any_field = true;
    const std::string_view value = field->value();
    std::size_t at = 0;
    while (at <= value.size()) {
      const std::size_t comma = std::min(value.find(',', at), value.size());
      std::string_view item = value.substr(at, comma - at);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      // Empty list elements are allowed and mean nothing (RFC 9110 5.6.1).
      if (!item.empty()) codings.push_back(ascii_lower(std::string(item)));
      at = comma + 1;
    }
  }
  if (!any_field) return std::nullopt;
  const auto malformed = [](const std::string& why) {
    return TransferCodingProblem{HttpStatus::bad_request, "bad_request",
                                 "malformed Transfer-Encoding: " + why};
  };
  if (request.version() < kHttp11)
    return malformed("an HTTP/1.0 request cannot carry one (its framing is faulty)");
  if (codings.empty()) return malformed("no transfer coding is named");
  if (codings.back() != "chunked")
    return malformed("the last transfer coding must be chunked, got " +
                     quote_client_text(codings.back()));
  if (codings.size() == 1) return std::nullopt;
  if (std::find(codings.begin(), codings.end() - 1, "chunked") != codings.end() - 1)
    return malformed("chunked is applied more than once");
  return TransferCodingProblem{HttpStatus::not_implemented, "unsupported_transfer_coding",
                               "transfer coding " + quote_client_text(codings.front()) +
                                   " is not supported: send the body chunked alone or with "
                                   "Content-Length"};
}

// 503 for a stream past the cap (none may open without slots).
ApiResponse too_many_event_streams(const std::shared_ptr<EventStreamSlots>& slots) {
  const std::size_t max = slots ? slots->max() : 0;
  ApiResponse refused =
      error_response(HttpStatus::service_unavailable, "too_many_event_streams",
                     "the server has its maximum of " + std::to_string(max) +
                         " event streams open; retry later or poll GET /v1/jobs/{id}");
  refused.headers.emplace_back("Retry-After", "5");
  return refused;
}

}  // namespace

HttpResponse to_http_response(ApiResponse api, unsigned version, bool keep_alive, bool head_only) {
  HttpResponse response{api.status, version};
  response.set(http::field::server, "kerntuned");
  response.set(http::field::content_type, api.content_type);
  for (const auto& [name, value] : api.headers) response.set(name, value);
  response.keep_alive(keep_alive);
  if (head_only) {
    // The headers a GET would get, Content-Length included; no body follows a HEAD response.
    response.content_length(api.body.size());
  } else {
    response.body() = std::move(api.body);
    response.prepare_payload();
  }
  return response;
}

Session::Session(tcp::socket&& socket, SessionSettings settings)
    : stream_(std::move(socket)), settings_(settings) {}

void Session::start() {
  // Run on the connection's strand: the listener hands over sockets made with one.
  boost::asio::dispatch(stream_.get_executor(),
                        beast::bind_front_handler(&Session::do_read, shared_from_this()));
}

void Session::do_read() {
  parser_.emplace();
  parser_->header_limit(kMaxRequestHeaderBytes);
  parser_->body_limit(settings_.context->max_body_bytes);
  stream_.expires_after(settings_.read_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&Session::on_read, shared_from_this()));
}

void Session::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == boost::asio::error::operation_aborted)
    return do_close();
  if (ec == http::error::body_limit)
    return refuse(HttpStatus::payload_too_large, "body_too_large",
                  "request body exceeds the limit of " +
                      std::to_string(settings_.context->max_body_bytes) + " bytes");
  if (ec == http::error::header_limit)
    return refuse(HttpStatus::request_header_fields_too_large, "headers_too_large",
                  "request line and headers exceed the limit of " +
                      std::to_string(kMaxRequestHeaderBytes) + " bytes");
  if (ec.category() == http::make_error_code(http::error::bad_target).category())
    return refuse(HttpStatus::bad_request, "bad_request",
                  "malformed HTTP request: " + ec.message());
  if (ec) {
    spdlog::debug("read: {}", ec.message());
    return do_close();
  }
  const HttpRequest& request = parser_->get();
  // RFC 9112 3.2: an HTTP/1.1 request carries exactly one Host field, else 400.
  if (request.version() >= kHttp11 && request.count(http::field::host) != 1)
    return refuse(HttpStatus::bad_request, "bad_request",
                  request.count(http::field::host) == 0
                      ? "HTTP/1.1 request without a Host header"
                      : "HTTP/1.1 request with more than one Host header");
  if (auto problem = transfer_coding_problem(request))
    return refuse(problem->status, problem->code, problem->message);
  const auto started = std::chrono::steady_clock::now();
  // Before routing: without the token a client learns nothing, not even which paths exist.
  if (std::optional<ApiResponse> denied = check_access(request, settings_.context->access))
    return answer(std::move(*denied), started);
  if (settings_.queries == nullptr)
    return answer(settings_.router->dispatch(request, *settings_.context), started);
  if (std::optional<ApiResponse> ready =
          settings_.router->answer_on_io_thread(request, *settings_.context))
    return answer(std::move(*ready), started);
  // The parser (and the request in it) stays put until the answer is sent: nothing reads the
  // connection meanwhile.
  boost::asio::post(*settings_.queries, [self = shared_from_this(), started] {
    ApiResponse api =
        self->settings_.router->dispatch(self->parser_->get(), *self->settings_.context);
    boost::asio::post(
        self->stream_.get_executor(),
        [self, api = std::move(api), started]() mutable { self->answer(std::move(api), started); });
  });
}

void Session::answer(ApiResponse api, std::chrono::steady_clock::time_point started) {
  const HttpRequest& request = parser_->get();
  const auto elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
  spdlog::debug("{} {} -> {} ({:.1f} ms)", std::string(request.method_string()),
                std::string(request.target()), static_cast<unsigned>(api.status), elapsed.count());
  if (settings_.context->http_metrics)
    settings_.context->http_metrics->observe(
        settings_.router->pattern_of(request), std::string(request.method_string()),
        static_cast<unsigned>(api.status), elapsed.count() / 1000.0);
  if (api.event_stream && request.method() == http::verb::get && api.status == HttpStatus::ok)
    return start_event_stream(std::move(api));
  if (api.event_stream && request.method() == http::verb::head && api.status == HttpStatus::ok)
    return answer_event_stream_head();
  send_response(to_http_response(std::move(api), request.version(), request.keep_alive(),
                                 request.method() == http::verb::head));
}

void Session::start_event_stream(ApiResponse api) {
  const HttpRequest& request = parser_->get();
  auto slot = EventStreamSlots::acquire(settings_.event_slots);
  if (!slot)
    return send_response(to_http_response(too_many_event_streams(settings_.event_slots),
                                          request.version(), request.keep_alive()));
  EventStreamSettings stream_settings = settings_.event_streams;
  const AppContext* context = settings_.context;
  stream_settings.decorate_end = [context](nlohmann::json& view, const JobRecord& job) {
    add_staleness(view, job, *context);  // in memory: the daemon's keys against the job's
  };
  // A reconnecting client: resume after what it holds. An id this server did not write (or of
  // another job: its digests match nothing) starts the stream afresh.
  if (const auto last = request.find("Last-Event-ID"); last != request.end())
    stream_settings.resume_from = parse_event_id(std::string_view(last->value()));
  std::make_shared<EventStream>(stream_, shared_from_this(), context->scheduler.events(),
                                std::move(api.event_stream), request.version(), stream_settings,
                                std::move(*slot))
      ->start();
}

void Session::answer_event_stream_head() {
  const HttpRequest& request = parser_->get();
  // What the GET would get, without taking a slot: the 503 when the streams are at their cap,
  // else the stream's own headers, after which the GET's connection closes, so this one does too.
  const auto& slots = settings_.event_slots;
  if (!slots || slots->open() >= slots->max())
    return send_response(to_http_response(too_many_event_streams(slots), request.version(),
                                          request.keep_alive(), true));
  auto head = std::make_shared<std::string>(event_stream_head(request.version()));
  stream_.expires_after(settings_.read_timeout);
  boost::asio::async_write(stream_, boost::asio::buffer(*head),
                           [self = shared_from_this(), head](beast::error_code ec, std::size_t) {
                             if (ec) return self->do_close();
                             self->drain();
                           });
}

void Session::refuse(HttpStatus status, const std::string& code, const std::string& message) {
  drain_after_write_ = true;
  send_response(to_http_response(error_response(status, code, message), kHttp11, false));
}

void Session::send_response(HttpResponse response) {
  response_ = std::move(response);
  const bool close = response_.need_eof();
  stream_.expires_after(settings_.read_timeout);
  http::async_write(stream_, response_,
                    beast::bind_front_handler(&Session::on_write, shared_from_this(), close));
}

void Session::on_write(bool close, beast::error_code ec, std::size_t) {
  if (ec) {
    spdlog::debug("write: {}", ec.message());
    return do_close();
  }
  if (drain_after_write_) return drain();
  if (close) return do_close();
  response_ = {};
  do_read();
}

void Session::drain() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  drain_deadline_ = std::chrono::steady_clock::now() + kDrainTimeout;
  drain_some();
}

void Session::drain_some() {
  // One deadline for the whole drain: a client that keeps sending cannot hold the session.
  stream_.expires_at(drain_deadline_);
  stream_.async_read_some(boost::asio::buffer(drain_buffer_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (ec) return self->do_close();
                            self->drain_some();
                          });
}

void Session::do_close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

}  // namespace kt
