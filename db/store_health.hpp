// Whether the store's database works, as the store saw it last: kept by the connections (a lost
// PostgreSQL connection, or an SQLite file refusing writes, is an outage; a reconnect, or a write
// the file took, ends it), read by /healthz without a query. It also paces the retries (0.1 s
// doubling to 5 s, with jitter) and logs each outage once, when it begins and when it ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kt {

// A store operation that lost the database and did not wait for it (a FailFastOnOutage thread,
// or a daemon that stops): nothing was written.
class StoreUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kt

namespace kt::db {

struct StoreHealthSnapshot {
  std::string backend;  // "sqlite" or "postgresql"
  bool reachable = true;
  // While unreachable: when the outage began (UTC, ISO 8601) and the latest error.
  std::string since;
  std::string last_error;
  std::uint64_t outages = 0;  // outages since the store opened
};

class StoreHealth {
 public:
  explicit StoreHealth(std::string backend) : backend_(std::move(backend)) {}

  // A connection lost the database (or could not reconnect): an outage begins, or goes on.
  void lost(const std::string& error);
  // A connection reached the database again.
  void restored();
  StoreHealthSnapshot snapshot() const;

  // Sleeps before retry number `attempt` (0, 1, ...) of an operation that lost the database;
  // false, at once, when waiting was given up (the daemon stops).
  bool wait_before_retry(int attempt);
  // From now on (until wait_again) no operation waits for the database: each fails at once.
  void give_up_waiting();
  void wait_again();

  // The pause before retry `attempt`: 0.1 s doubling up to 5 s, times a jitter in [0.75, 1.25).
  static std::chrono::milliseconds backoff(int attempt, double jitter);

 private:
  const std::string backend_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool reachable_ = true;
  bool given_up_ = false;
  std::string since_;
  std::string last_error_;
  std::uint64_t outages_ = 0;
  std::chrono::steady_clock::time_point began_;
};

// While one lives on a thread, an operation on that thread that loses the database fails at once
// (kt::StoreUnavailable) instead of waiting for it: the API's handlers answer 503 rather than
// hold a request for the length of an outage. Without one, the engine's work waits and retries.
class FailFastOnOutage {
 public:
  FailFastOnOutage();
  ~FailFastOnOutage();
  FailFastOnOutage(const FailFastOnOutage&) = delete;
  FailFastOnOutage& operator=(const FailFastOnOutage&) = delete;
  static bool active();

 private:
  bool previous_;
};

}  // namespace kt::db
