#include "db/read_pool.hpp"

#include <stdexcept>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

namespace kt::db {
namespace {

// As long as the writer's: a reader waits only while a checkpoint resets the WAL index.
constexpr int kBusyTimeoutMs = 10000;

int trace_statement(unsigned type, void* context, void* statement, void*) {
  if (type != SQLITE_TRACE_STMT) return 0;
  const auto* observer = static_cast<const StatementObserver*>(context);
  char* expanded = sqlite3_expanded_sql(static_cast<sqlite3_stmt*>(statement));
  if (expanded != nullptr) {
    (*observer)(expanded);
    sqlite3_free(expanded);
  }
  return 0;
}

}  // namespace

void observe_statements(SQLite::Database& db, const StatementObserver* observer) {
  if (observer == nullptr)
    sqlite3_trace_v2(db.getHandle(), 0, nullptr, nullptr);
  else
    sqlite3_trace_v2(db.getHandle(), SQLITE_TRACE_STMT, trace_statement,
                     const_cast<StatementObserver*>(observer));
}

ReadPool::ReadPool(const std::filesystem::path& path, int connections) {
  if (connections < 1) throw std::invalid_argument("a read pool needs at least one connection");
  for (int i = 0; i < connections; ++i) {
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
    db->exec("PRAGMA query_only = ON");
    idle_.push_back(db.get());
    connections_.push_back(std::move(db));
  }
}

ReadPool::~ReadPool() = default;

ReadPool::Lease::Lease(Lease&& other) noexcept : pool_(other.pool_), db_(other.db_) {
  other.pool_ = nullptr;
  other.db_ = nullptr;
}

ReadPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->give_back(db_);
}

ReadPool::Lease ReadPool::acquire() {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [&] { return !idle_.empty(); });
  SQLite::Database* db = idle_.back();
  idle_.pop_back();
  return Lease(this, db);
}

void ReadPool::give_back(SQLite::Database* db) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(db);
  }
  returned_.notify_one();
}

void ReadPool::observe(StatementObserver observer) {
  // Every connection idle while the hook changes: none is mid-statement.
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [&] { return idle_.size() == connections_.size(); });
  observer_ = observer ? std::make_unique<StatementObserver>(std::move(observer)) : nullptr;
  for (const auto& db : connections_) observe_statements(*db, observer_.get());
}

}  // namespace kt::db
