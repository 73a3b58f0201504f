// Read-only SQLite connections to the store's file, lent one at a time. With WAL a reader never
// waits for the writer (nor the writer for it), so the API's queries run beside a job's writes
// and beside each other instead of queueing behind the store's one write connection.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace SQLite {
class Database;
}

namespace kt::db {

// Called with the text of every statement a connection runs, parameters filled in (tests use
// it to check query plans).
using StatementObserver = std::function<void(std::string_view sql)>;

class ReadPool {
 public:
  // Opens `connections` (>= 1) read-only connections; the file must exist and be migrated.
  ReadPool(const std::filesystem::path& path, int connections);
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
    SQLite::Database& operator*() const { return *db_; }

   private:
    friend class ReadPool;
    Lease(ReadPool* pool, SQLite::Database* db) : pool_(pool), db_(db) {}
    ReadPool* pool_;
    SQLite::Database* db_;
  };
  Lease acquire();

  // Installs (or with an empty function removes) the observer on every connection.
  void observe(StatementObserver observer);

 private:
  void give_back(SQLite::Database* db);

  std::vector<std::unique_ptr<SQLite::Database>> connections_;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<SQLite::Database*> idle_;
  std::unique_ptr<StatementObserver> observer_;
};

// Installs the observer on one connection (nullptr removes it); the observer must outlive it.
void observe_statements(SQLite::Database& db, const StatementObserver* observer);

}  // namespace kt::db
