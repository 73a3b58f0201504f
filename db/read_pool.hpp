// Read-only connections to the store's database, lent one at a time. A reader never waits for the
// writer (SQLite in WAL mode; PostgreSQL's MVCC), nor the writer for it, so the API's queries run
// beside a job's writes and beside each other instead of queueing behind the store's one write
// connection.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/connection.hpp"

namespace kt::db {

class ReadPool {
 public:
  // Opens `connections` (>= 1) read-only connections to the location (a file or a URI, see
  // db::open_connection); the database must exist and be migrated.
  ReadPool(const std::string& location, int connections,
           std::shared_ptr<StoreHealth> health = nullptr);
  ~ReadPool();
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  // A connection held until the lease is destroyed; waits while every connection is lent.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    Connection& operator*() const { return *db_; }

   private:
    friend class ReadPool;
    Lease(ReadPool* pool, Connection* db) : pool_(pool), db_(db) {}
    ReadPool* pool_;
    Connection* db_;
  };
  Lease acquire();

  // Installs (or with an empty function removes) the observer on every connection.
  void observe(StatementObserver observer);

 private:
  void give_back(Connection* db);

  std::vector<std::unique_ptr<Connection>> connections_;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<Connection*> idle_;
  std::unique_ptr<StatementObserver> observer_;
};

}  // namespace kt::db
