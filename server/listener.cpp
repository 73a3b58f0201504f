#include "server/listener.hpp"

#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>

namespace kt {
namespace beast = boost::beast;
using tcp = boost::asio::ip::tcp;

namespace {

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

}  // namespace

Listener::Listener(boost::asio::io_context& io, const tcp::endpoint& endpoint,
                   SessionSettings settings)
    : io_(io), acceptor_(boost::asio::make_strand(io)), settings_(settings) {
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
  });
}

void Listener::do_accept() {
  acceptor_.async_accept(boost::asio::make_strand(io_),
                         beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
}

void Listener::on_accept(beast::error_code ec, tcp::socket socket) {
  if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    spdlog::warn("accept: {}", ec.message());
  } else {
    std::make_shared<Session>(std::move(socket), settings_)->start();
  }
  do_accept();
}

}  // namespace kt
