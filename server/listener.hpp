// Accepts connections on one endpoint and starts a Session for each, on its own strand. Keeps the
// daemon alive at its descriptor limit: at most max_connections sessions at a time (the rest are
// refused with 503), and a failing accept (EMFILE, ENFILE, ...) is retried after a growing pause
// instead of at once, with its log line rate-limited.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/log_throttle.hpp"
#include "server/session.hpp"

namespace kt {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Opens, binds and listens at once; throws std::runtime_error naming the endpoint on failure.
  // Port 0 binds a free port: local_endpoint() tells which. max_connections (at least 1) bounds
  // the sessions open at once.
  Listener(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
           SessionSettings settings, std::size_t max_connections);
  void run();
  // Stops accepting (open sessions finish on their own).
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return local_endpoint_; }
  std::size_t max_connections() const { return max_connections_; }

 private:
  using Counter = std::shared_ptr<std::atomic<std::size_t>>;

  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
  void retry_accept_later(const boost::beast::error_code& ec);
  void on_retry(boost::beast::error_code ec);
  void start_session(boost::asio::ip::tcp::socket socket);
  void refuse(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;  // its executor is the listener's strand
  boost::asio::steady_timer retry_timer_;    // on the same strand
  boost::asio::ip::tcp::endpoint local_endpoint_;
  SessionSettings settings_;
  std::size_t max_connections_;
  // Shared with the sessions and refusals they count, which may outlive the listener.
  Counter open_sessions_;
  Counter refusals_in_flight_;
  std::chrono::milliseconds accept_backoff_{0};
  LogThrottle accept_errors_log_;
  LogThrottle refusals_log_;
};

}  // namespace kt
