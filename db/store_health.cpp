#include "db/store_health.hpp"

#include <algorithm>
#include <ctime>
#include <random>

#include <spdlog/spdlog.h>

#include "tuner/utc_time.hpp"

namespace kt::db {
namespace {

thread_local bool fail_fast = false;

std::string utc_now() {
  return utc_now_text();
}

}  // namespace

void StoreHealth::lost(const std::string& error) {
  std::lock_guard lock(mutex_);
  last_error_ = error;
  if (!reachable_) return;  // the outage goes on: logged when it began
  reachable_ = false;
  since_ = utc_now();
  began_ = std::chrono::steady_clock::now();
  ++outages_;
  // An SQLite file is always there to read: its outage is one of writes only.
  if (backend_ == "sqlite")
    spdlog::warn(
        "the sqlite store takes no writes ({}); retrying with backoff, writes answered 503", error);
  else
    spdlog::warn(
        "the {} store is unreachable ({}); retrying with backoff, answers from memory only",
        backend_, error);
}

void StoreHealth::restored() {
  std::lock_guard lock(mutex_);
  if (reachable_) return;
  reachable_ = true;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  spdlog::info("the {} store {} again after {:.1f} s", backend_,
               backend_ == "sqlite" ? "takes writes" : "is reachable", seconds);
  since_.clear();
  last_error_.clear();
}

StoreHealthSnapshot StoreHealth::snapshot() const {
  std::lock_guard lock(mutex_);
  return {backend_, reachable_, since_, last_error_, outages_};
}

std::chrono::milliseconds StoreHealth::backoff(int attempt, double jitter) {
  const double base_ms = std::min(5000.0, 100.0 * static_cast<double>(1u << std::min(attempt, 6)));
  return std::chrono::milliseconds(static_cast<std::int64_t>(base_ms * jitter));
}

bool StoreHealth::wait_before_retry(int attempt) {
  thread_local std::minstd_rand random(std::random_device{}());
  const double jitter = std::uniform_real_distribution<double>(0.75, 1.25)(random);
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, backoff(attempt, jitter), [&] { return given_up_; });
  return !given_up_;
}

void StoreHealth::give_up_waiting() {
  {
    std::lock_guard lock(mutex_);
    given_up_ = true;
  }
  wake_.notify_all();
}

void StoreHealth::wait_again() {
  std::lock_guard lock(mutex_);
  given_up_ = false;
}

FailFastOnOutage::FailFastOnOutage() : previous_(fail_fast) {
  fail_fast = true;
}
FailFastOnOutage::~FailFastOnOutage() {
  fail_fast = previous_;
}
bool FailFastOnOutage::active() {
  return fail_fast;
}

}  // namespace kt::db
