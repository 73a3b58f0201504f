// The daemon's HTTP side: an io_context served by N I/O threads, the API router, a listener and a
// pool of query threads: the I/O threads parse and write, the handlers that query the store run
// on the pool, so a slow query never stalls another connection (nor /healthz). The number of open
// connections is capped below the open-files limit, so that clients cannot take the descriptors
// the store and the workers need.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "server/app_context.hpp"
#include "server/event_stream.hpp"
#include "server/router.hpp"

namespace kt {

class Listener;

struct ListenAddress {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
};

// "HOST:PORT", "[::1]:PORT" or ":PORT" (all interfaces); throws std::invalid_argument.
ListenAddress parse_listen_address(const std::string& text);

inline constexpr std::size_t kDefaultMaxConnections = 512;
// Descriptors kept back from client connections: the store (database, WAL, shared memory), the
// workers' pipes, compile-cache files, the event loops and the 503 answers still in flight.
inline constexpr std::uint64_t kReservedDescriptors = 64;

// RLIMIT_NOFILE's soft limit of this process (UINT64_MAX when unlimited).
std::uint64_t open_files_limit();
// The connection cap to use: requested, but never above open_files_limit - kReservedDescriptors,
// and at least 1.
std::size_t fit_connection_cap(std::size_t requested, std::uint64_t open_files_limit);

// The event stream cap to use: requested, but at most half the connection cap (at least 1), so
// that streams, which stay open, never take every connection from the API and /healthz.
std::size_t fit_event_stream_cap(std::size_t requested, std::size_t max_connections);

struct ServerOptions {
  ListenAddress listen;
  int io_threads = 2;
  std::chrono::seconds read_timeout{30};
  std::size_t max_connections = kDefaultMaxConnections;  // lowered to fit the open-files limit
  // Threads that run the handlers which query the store (as many as the store has read
  // connections: more would only wait for one).
  int query_threads = 4;
  // Event streams (GET /v1/jobs/{id}/events) open at once; they count as connections too.
  std::size_t max_event_streams = kDefaultMaxEventStreams;
  std::chrono::milliseconds event_heartbeat{15000};
};

class HttpServer {
 public:
  HttpServer(AppContext& context, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds (throws std::runtime_error naming the address when it cannot) and starts the threads.
  void start();
  // The bound port (the real one when asked for port 0); valid after start().
  unsigned short port() const { return port_; }
  // The connection cap in force (max_connections fitted to the open-files limit); valid after
  // start().
  std::size_t max_connections() const { return max_connections_; }
  // The event stream cap in force (fit_event_stream_cap); valid after start().
  std::size_t max_event_streams() const { return max_event_streams_; }
  // Stops accepting, abandons open connections and joins the threads. Idempotent.
  void stop();

 private:
  AppContext& context_;
  ServerOptions options_;
  Router router_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::shared_ptr<Listener> listener_;
  std::unique_ptr<boost::asio::thread_pool> queries_;
  std::vector<std::thread> threads_;
  unsigned short port_ = 0;
  std::size_t max_connections_ = 0;
  std::size_t max_event_streams_ = 0;
};

}  // namespace kt
