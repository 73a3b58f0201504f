// Accepts connections on one endpoint and starts a Session for each, on its own strand.
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "server/session.hpp"

namespace kt {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Opens, binds and listens at once; throws std::runtime_error naming the endpoint on failure.
  // Port 0 binds a free port: local_endpoint() tells which.
  Listener(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
           SessionSettings settings);
  void run();
  // Stops accepting (open sessions finish on their own).
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return local_endpoint_; }

 private:
  void do_accept();
  void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ip::tcp::endpoint local_endpoint_;
  SessionSettings settings_;
};

}  // namespace kt
