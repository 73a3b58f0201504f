// The store's writer lock, which also tells readers what may have changed: every unlock counts as
// a write (after its transaction committed), and a write may say what it touched, so a cache of
// answers about one job or about the fronts survives writes to other jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kt::db {

class WriterMutex {
 public:
  void lock();
  void unlock();

  // Called while locked, by a write that changes nothing but the rows of these jobs (variants,
  // counts, the job row) and, with touches_fronts, the Pareto fronts and best answers. A write
  // that calls neither may have changed anything. touches_no_answer: it changes nothing any
  // answer reads (the compile cache).
  void touches_job(std::int64_t job_id);
  void touches_fronts();
  void touches_no_answer();

  // Counts every write. Equal values before and after a read: nothing was written meanwhile.
  std::uint64_t writes() const { return writes_.load(std::memory_order_acquire); }
  // The write count at the last write that may have changed the job's rows (or anything): an
  // answer about the job read while it had a value stays right while it keeps it.
  std::uint64_t job_stamp(std::int64_t job_id) const;
  // The same for the fronts and what /v1/best reads.
  std::uint64_t fronts_stamp() const;

 private:
  std::mutex mutex_;
  std::atomic<std::uint64_t> writes_{0};
  // The current write's scope (only the lock holder touches these).
  bool scoped_ = false;
  bool fronts_ = false;
  std::vector<std::int64_t> jobs_;

  std::atomic<std::uint64_t> everything_stamp_{0};  // last write of unknown scope
  std::atomic<std::uint64_t> fronts_stamp_{0};
  mutable std::mutex stamps_mutex_;  // held for a map lookup or update only, never over a query
  std::unordered_map<std::int64_t, std::uint64_t> job_stamps_;
};

}  // namespace kt::db
