#include "db/writer_mutex.hpp"

#include <algorithm>

#include "db/retry_wait.hpp"

namespace kt::db {
namespace {

// The writer lock this thread holds, if any (a thread holds at most one store's).
thread_local WriterMutex* held = nullptr;

}  // namespace

void WriterMutex::lock() {
  mutex_.lock();
  held = this;
  scoped_ = false;
  fronts_ = false;
  jobs_.clear();
}

void WriterMutex::touches_job(std::int64_t job_id) {
  scoped_ = true;
  jobs_.push_back(job_id);
}

void WriterMutex::touches_fronts() {
  scoped_ = true;
  fronts_ = true;
}

void WriterMutex::touches_no_answer() {
  scoped_ = true;
}

void WriterMutex::unlock() {
  // Stamps first, then the count: a reader that sees the new count also sees the new stamps.
  const std::uint64_t write = writes_.load(std::memory_order_relaxed) + 1;
  if (!scoped_) {
    everything_stamp_.store(write, std::memory_order_release);
  } else {
    if (fronts_) fronts_stamp_.store(write, std::memory_order_release);
    if (!jobs_.empty()) {
      std::lock_guard lock(stamps_mutex_);
      for (const std::int64_t job : jobs_) job_stamps_[job] = write;
    }
  }
  writes_.store(write, std::memory_order_release);
  if (held == this) held = nullptr;
  mutex_.unlock();
}

std::uint64_t WriterMutex::job_stamp(std::int64_t job_id) const {
  std::uint64_t job = 0;
  {
    std::lock_guard lock(stamps_mutex_);
    if (const auto found = job_stamps_.find(job_id); found != job_stamps_.end())
      job = found->second;
  }
  return std::max(job, everything_stamp_.load(std::memory_order_acquire));
}

std::uint64_t WriterMutex::fronts_stamp() const {
  return std::max(fronts_stamp_.load(std::memory_order_acquire),
                  everything_stamp_.load(std::memory_order_acquire));
}

bool wait_to_retry(StoreHealth& health, int attempt) {
  WriterMutex* const writer = held;
  if (writer == nullptr) return health.wait_before_retry(attempt);
  // The failed attempt rolled back, so nothing of it is left to guard. Unlocking counts as a
  // write of unknown scope: cached answers are read again, which is only cautious. Taking the lock
  // again starts a new scope, which the retried operation fills in.
  struct Relock {
    WriterMutex* writer;
    ~Relock() { writer->lock(); }
  };
  writer->unlock();
  const Relock relock{writer};
  return health.wait_before_retry(attempt);
}

}  // namespace kt::db
