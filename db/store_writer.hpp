// The store's one write connection behind its writer mutex, shared by every part of the store
// (db/job_store.hpp, db/variant_store.hpp, ...): a part locks it for each write and says what the
// write touches, so that the write stamps tell cached answers whether they still hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "db/connection.hpp"
#include "db/writer_mutex.hpp"

namespace kt::db {

class StoreWriter {
 public:
  // The connection must be open for writing and migrated.
  explicit StoreWriter(std::unique_ptr<Connection> connection);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Held (std::lock_guard) over every use of db() and of the touches_* calls.
  WriterMutex& mutex() { return mutex_; }
  Connection& db() { return *db_; }

  // True for PostgreSQL: other daemons may share the database.
  bool shared() const { return shared_; }

  // Tell the writer mutex (held) what this write touches: the job's rows, and the fronts when
  // the job is a tune job (only those rank on a front). One primary-key lookup each.
  void touches_job(std::int64_t job_id);
  void touches_job_of_variant(std::int64_t variant_id);
  // Counts as a write that may have changed any answer, without writing (takes the lock).
  void note_outside_change();

  // The write stamps (Store::write_count and the like). On PostgreSQL every call returns a new
  // value: other daemons' writes are not counted here, so nothing may be kept on the strength
  // of an unchanged count.
  std::uint64_t write_count() const { return shared_ ? fresh_stamp() : mutex_.writes(); }
  std::uint64_t job_stamp(std::int64_t job_id) const {
    return shared_ ? fresh_stamp() : mutex_.job_stamp(job_id);
  }
  std::uint64_t fronts_stamp() const { return shared_ ? fresh_stamp() : mutex_.fronts_stamp(); }

  // Installs (empty: removes) the observer of the write connection's statements.
  void observe(const StatementObserver& observer);

 private:
  std::uint64_t fresh_stamp() const {
    return (std::uint64_t{1} << 63) | fresh_stamp_.fetch_add(1, std::memory_order_relaxed);
  }

  WriterMutex mutex_;
  std::unique_ptr<Connection> db_;
  bool shared_ = false;
  mutable std::atomic<std::uint64_t> fresh_stamp_{0};
  std::unique_ptr<StatementObserver> observer_;
};

}  // namespace kt::db
