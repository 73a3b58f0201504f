// HttpServer: resolving the listen address, fitting the connection cap to the open-files limit,
// and the I/O threads.
#include "server/http_server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/tcp.hpp>

#include "server/api_routes.hpp"
#include "server/listener.hpp"

namespace kt {
using tcp = boost::asio::ip::tcp;

ListenAddress parse_listen_address(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("listen address '" + text + "' must be HOST:PORT");
  ListenAddress address;
  address.host = text.substr(0, colon);
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);
  if (address.host.empty()) address.host = "0.0.0.0";
  const std::string port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535)
    throw std::invalid_argument("listen address '" + text + "' has a bad port '" + port + "'");
  address.port = static_cast<unsigned short>(value);
  return address;
}

std::uint64_t open_files_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

std::size_t fit_connection_cap(std::size_t requested, std::uint64_t open_files_limit) {
  const std::uint64_t room =
      open_files_limit > kReservedDescriptors ? open_files_limit - kReservedDescriptors : 0;
  const std::uint64_t cap = std::min<std::uint64_t>(requested, room);
  return static_cast<std::size_t>(std::max<std::uint64_t>(1, cap));
}

std::size_t fit_event_stream_cap(std::size_t requested, std::size_t max_connections) {
  return std::max<std::size_t>(1, std::min(requested, max_connections / 2));
}

HttpServer::HttpServer(AppContext& context, ServerOptions options)
    : context_(context),
      options_(std::move(options)),
      router_(make_api_router()),
      io_(std::max(1, options_.io_threads)) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::start() {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  const auto results =
      resolver.resolve(options_.listen.host, std::to_string(options_.listen.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty())
    throw std::runtime_error("cannot resolve listen host '" + options_.listen.host +
                             "': " + ec.message());
  const tcp::endpoint endpoint = results.begin()->endpoint();

  const std::uint64_t files_limit = open_files_limit();
  max_connections_ = fit_connection_cap(options_.max_connections, files_limit);
  if (max_connections_ < options_.max_connections)
    spdlog::warn(
        "at most {} connections instead of {}: the open-files limit is {} and {} "
        "descriptors are kept for the store and the workers (raise it with ulimit -n)",
        max_connections_, options_.max_connections, files_limit, kReservedDescriptors);

  queries_ = std::make_unique<boost::asio::thread_pool>(std::max(1, options_.query_threads));
  SessionSettings settings{&router_, &context_, options_.read_timeout, queries_.get()};
  max_event_streams_ = fit_event_stream_cap(options_.max_event_streams, max_connections_);
  if (max_event_streams_ < options_.max_event_streams)
    spdlog::warn("at most {} event streams instead of {}: half the {} connections",
                 max_event_streams_, options_.max_event_streams, max_connections_);
  settings.event_slots = std::make_shared<EventStreamSlots>(max_event_streams_);
  context_.event_streams = settings.event_slots;  // for GET /metrics
  settings.event_streams.heartbeat = options_.event_heartbeat;
  listener_ = std::make_shared<Listener>(io_, endpoint, settings, max_connections_);
  port_ = listener_->local_endpoint().port();
  if (endpoint.address().is_unspecified()) {
    // kerntuned only gets here with --token-file or --insecure; say which door is open.
    const AccessPolicy& access = context_.access;
    const std::string who =
        !access.token         ? "anyone who can reach this host can submit jobs and read results "
                                "(--insecure: no access token)"
        : access.public_reads ? "anyone who can reach this host can read results "
                                "(--public-reads); submitting and cancelling need the token"
                              : "every request but /healthz needs the bearer token";
    spdlog::warn(
        "listening on every network interface ({}:{}): {}; use --listen 127.0.0.1:PORT to serve "
        "this machine only",
        endpoint.address().to_string(), port_, who);
  }
  listener_->run();

  work_ =
      std::make_unique<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
          io_.get_executor());
  const int count = std::max(1, options_.io_threads);
  for (int i = 0; i < count; ++i)
    threads_.emplace_back([this] {
      try {
        io_.run();
      } catch (const std::exception& error) {
        spdlog::critical("I/O thread stopped: {}", error.what());
      }
    });
}

void HttpServer::stop() {
  if (listener_) listener_->stop();
  work_.reset();
  io_.stop();
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
  threads_.clear();
  // Handlers still running finish (their answers go nowhere): none may outlive the context.
  if (queries_) queries_->join();
  queries_.reset();
  listener_.reset();
}

}  // namespace kt
