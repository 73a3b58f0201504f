// Listener: the accept loop, the connection cap and the 503 sent to a client over it, and the
// back-off after a failed accept.
#include "server/listener.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/write.hpp>

#include "server/api_response.hpp"

namespace kt {
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// A failed accept is retried after 10 ms, doubling up to 1 s while it keeps failing: long enough
// that a descriptor shortage cannot spin the loop, short enough that the server comes back soon
// after descriptors free up.
constexpr std::chrono::milliseconds kFirstAcceptBackoff = 10ms;
constexpr std::chrono::milliseconds kMaxAcceptBackoff = 1s;
constexpr std::chrono::seconds kLogInterval = 10s;
// A refused client gets this long to read the 503 before its socket is closed, and at most this
// many refusals hold a descriptor at once; past that a connection is closed without an answer.
constexpr std::chrono::seconds kRefusalLinger = 2s;
constexpr std::size_t kMaxRefusalsInFlight = 32;
constexpr std::size_t kMaxRefusalDrainBytes = 64 * 1024;
constexpr unsigned kHttp11 = 11;

std::string describe(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

void check(beast::error_code ec, const char* step, const tcp::endpoint& endpoint) {
  if (ec)
    throw std::runtime_error(std::string("cannot listen on ") + describe(endpoint) + ": " + step +
                             ": " + ec.message());
}

// Deleter of a counted session: frees the slot only once the session (and its socket) is gone.
struct ReleaseSessionSlot {
  std::shared_ptr<std::atomic<std::size_t>> open_sessions;
  void operator()(Session* session) const {
    delete session;
    open_sessions->fetch_sub(1);
  }
};

// A connection over the cap. It is answered rather than closed, so that a client sees why: a
// short 503 with Retry-After: 1 and Connection: close, written without waiting for the request.
// Then our side shuts down and reads (and drops) what the client sends until it closes or
// kRefusalLinger passes: closing with its request unread would reset the connection and could
// destroy the 503 before the client reads it.
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(tcp::socket&& socket, std::shared_ptr<std::atomic<std::size_t>> in_flight,
          std::size_t max_connections)
      : stream_(std::move(socket)), in_flight_(std::move(in_flight)) {
    in_flight_->fetch_add(1);  // here, so that the destructor's decrement always has its match
    response_ = to_http_response(
        error_response(HttpStatus::service_unavailable, "too_many_connections",
                       "the server has its maximum of " + std::to_string(max_connections) +
                           " connections open; retry later"),
        kHttp11, false);
    response_.set(http::field::retry_after, "1");
  }
  ~Refusal() { in_flight_->fetch_sub(1); }
  Refusal(const Refusal&) = delete;
  Refusal& operator=(const Refusal&) = delete;

  void start() {
    stream_.expires_after(kRefusalLinger);
    http::async_write(stream_, response_,
                      beast::bind_front_handler(&Refusal::on_write, shared_from_this()));
  }

 private:
  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return;  // the client is gone: the destructor closes the socket
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    drain();
  }
  void drain() {
    stream_.async_read_some(boost::asio::buffer(buffer_),
                            beast::bind_front_handler(&Refusal::on_drain, shared_from_this()));
  }
  void on_drain(beast::error_code ec, std::size_t bytes) {
    drained_ += bytes;
    if (!ec && drained_ < kMaxRefusalDrainBytes) drain();
  }

  beast::tcp_stream stream_;
  std::shared_ptr<std::atomic<std::size_t>> in_flight_;
  HttpResponse response_;
  std::array<char, 4096> buffer_{};
  std::size_t drained_ = 0;
};

}  // namespace

Listener::Listener(boost::asio::io_context& io, const tcp::endpoint& endpoint,
                   SessionSettings settings, std::size_t max_connections)
    : io_(io),
      acceptor_(boost::asio::make_strand(io)),
      retry_timer_(acceptor_.get_executor()),
      settings_(settings),
      max_connections_(std::max<std::size_t>(1, max_connections)),
      open_sessions_(std::make_shared<std::atomic<std::size_t>>(0)),
      refusals_in_flight_(std::make_shared<std::atomic<std::size_t>>(0)),
      accept_errors_log_(kLogInterval),
      refusals_log_(kLogInterval) {
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  check(ec, "open", endpoint);
  // A restarted daemon must be able to take its port back while old connections linger.
  acceptor_.set_option(boost::asio::socket_base::reuse_address(true), ec);
  check(ec, "set reuse_address", endpoint);
  acceptor_.bind(endpoint, ec);
  check(ec, "bind", endpoint);
  acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  check(ec, "listen", endpoint);
  local_endpoint_ = acceptor_.local_endpoint(ec);
  check(ec, "local_endpoint", endpoint);
}

void Listener::run() {
  boost::asio::dispatch(acceptor_.get_executor(),
                        beast::bind_front_handler(&Listener::do_accept, shared_from_this()));
}

void Listener::stop() {
  boost::asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ignored;
    self->acceptor_.close(ignored);
    self->retry_timer_.cancel();
  });
}

void Listener::do_accept() {
  acceptor_.async_accept(boost::asio::make_strand(io_),
                         beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
}

void Listener::on_accept(beast::error_code ec, tcp::socket socket) {
  if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec == boost::asio::error::connection_aborted) {
    // Only that client is gone (it reset before we took it); the listening socket is fine.
    spdlog::debug("accept: {}", ec.message());
    return do_accept();
  }
  if (ec) return retry_accept_later(ec);
  accept_backoff_ = 0ms;
  if (open_sessions_->load() >= max_connections_)
    refuse(std::move(socket));
  else
    start_session(std::move(socket));
  do_accept();
}

void Listener::retry_accept_later(const beast::error_code& ec) {
  // Accepting again at once would fail again at once (EMFILE and ENFILE last until some
  // descriptor is closed): that loop is what filled the disk with log lines.
  accept_backoff_ = accept_backoff_ == 0ms ? kFirstAcceptBackoff
                                           : std::min(accept_backoff_ * 2, kMaxAcceptBackoff);
  if (const auto count = accept_errors_log_.record())
    spdlog::warn(
        "accept failed: {} ({} time(s) since the last report; {} connection(s) open); "
        "retrying with back-off up to {} ms",
        ec.message(), *count, open_sessions_->load(), kMaxAcceptBackoff.count());
  retry_timer_.expires_after(accept_backoff_);
  retry_timer_.async_wait(beast::bind_front_handler(&Listener::on_retry, shared_from_this()));
}

void Listener::on_retry(beast::error_code ec) {
  if (ec || !acceptor_.is_open()) return;
  do_accept();
}

void Listener::start_session(tcp::socket socket) {
  // The slot is taken only once the session exists and given back by the deleter, so every
  // path that ends a session (close, timeout, error) frees it.
  auto* session = new Session(std::move(socket), settings_);
  open_sessions_->fetch_add(1);
  std::shared_ptr<Session>(session, ReleaseSessionSlot{open_sessions_})->start();
}

void Listener::refuse(tcp::socket socket) {
  const bool answered = refusals_in_flight_->load() < kMaxRefusalsInFlight;
  if (const auto count = refusals_log_.record())
    spdlog::warn("connection limit of {} reached: refused {} connection(s) since the last report",
                 max_connections_, *count);
  if (!answered) {
    // Even the answers are at their limit: dropping the socket keeps the descriptor count bounded.
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  std::make_shared<Refusal>(std::move(socket), refusals_in_flight_, max_connections_)->start();
}

}  // namespace kt
