// The store's view of a database: a connection that prepares statements and runs transactions,
// with one implementation per backend (db/sqlite_connection.cpp, db/postgresql_connection.cpp).
// The store writes its SQL once, with SQLite's placeholders (? and ?N); what differs between the
// dialects is in db/dialect.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "db/store_health.hpp"

namespace kt::db {

enum class Dialect { sqlite, postgresql };

// Any failure the database reports; the message carries the database's own text and code.
class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The database was lost (PostgreSQL went away or restarts; an SQLite file stopped taking writes),
// so the operation did not happen, or it is not known whether its last COMMIT did. The connection
// reconnects on its next use; health is the store's, which paces the retries.
class ConnectionLost : public DatabaseError {
 public:
  ConnectionLost(const std::string& message, std::shared_ptr<StoreHealth> health)
      : DatabaseError(message), health_(std::move(health)) {}
  StoreHealth* health() const { return health_.get(); }

 private:
  std::shared_ptr<StoreHealth> health_;
};

// Called with the text of every statement a connection runs (tests use it to check query plans).
using StatementObserver = std::function<void(std::string_view sql)>;

// What a backend's prepared statement does; owned by a Statement.
class StatementBackend {
 public:
  virtual ~StatementBackend() = default;
  virtual void bind(int index, std::int64_t value) = 0;
  virtual void bind(int index, double value) = 0;
  virtual void bind(int index, const std::string& value) = 0;
  virtual void bind_blob(int index, const std::vector<char>& bytes) = 0;
  virtual void bind_null(int index) = 0;
  virtual bool step() = 0;
  virtual std::int64_t exec() = 0;
  virtual void reset() = 0;
  virtual int column_index(std::string_view name) const = 0;
  virtual bool is_null(int column) const = 0;
  virtual std::int64_t int64(int column) const = 0;
  virtual double real(int column) const = 0;
  virtual std::string text(int column) const = 0;
  virtual std::vector<char> blob(int column) const = 0;
};

enum class TransactionKind {
  write,     // takes the database's one write lock first: writers run one after another
  snapshot,  // reads only, all from one snapshot
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  virtual std::unique_ptr<StatementBackend> prepare(std::string_view sql) = 0;
  // Several statements without parameters (a migration step).
  virtual void execute_script(const std::string& sql) = 0;
  virtual void begin(TransactionKind kind) = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  // Installs the observer (nullptr removes it); it must outlive the connection's use of it.
  virtual void observe(const StatementObserver* observer) = 0;
};

enum class Access { write, read };

// A path opens an SQLite file; a postgresql:// or postgres:// URI a PostgreSQL database.
bool is_postgresql_uri(std::string_view location);
// The location with any password in a URI replaced by "***", for messages and logs.
std::string redacted_location(std::string_view location);
// The writer checks that the database was not written by a newer kerntune before it changes
// anything (SQLite: before it switches the file to WAL). A PostgreSQL connection reports a lost
// connection and its reconnects to health (when given) and throws ConnectionLost.
std::unique_ptr<Connection> open_connection(const std::string& location, Access access,
                                            std::shared_ptr<StoreHealth> health = nullptr);

class Statement;

// One column of a statement's current row.
class Column {
 public:
  Column(const StatementBackend& statement, int index) : statement_(statement), index_(index) {}
  bool is_null() const { return statement_.is_null(index_); }
  std::int64_t int64() const { return statement_.int64(index_); }
  int integer() const { return static_cast<int>(statement_.int64(index_)); }
  double real() const { return statement_.real(index_); }
  std::string text() const { return statement_.text(index_); }
  std::vector<char> blob() const { return statement_.blob(index_); }

 private:
  const StatementBackend& statement_;
  int index_;
};

// A prepared statement (move-only owner). Placeholders are ? or ?N (1-based); a parameter left
// unbound is NULL. step() runs it on the first call and then walks its rows; exec() runs a
// statement without rows and returns how many rows it changed; reset() readies it to run again
// (bindings stay until replaced).
class Statement {
 public:
  Statement(Connection& db, std::string_view sql) : backend_(db.prepare(sql)) {}
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  void bind(int index, std::int64_t value) { backend_->bind(index, value); }
  void bind(int index, int value) { backend_->bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, double value) { backend_->bind(index, value); }
  void bind(int index, const std::string& value) { backend_->bind(index, value); }
  void bind(int index, const char* value) { backend_->bind(index, std::string(value)); }
  void bind_blob(int index, const std::vector<char>& bytes) { backend_->bind_blob(index, bytes); }
  void bind_null(int index) { backend_->bind_null(index); }
  bool step() { return backend_->step(); }
  std::int64_t exec() { return backend_->exec(); }
  void reset() { backend_->reset(); }
  Column column(int index) const { return Column(*backend_, index); }
  Column column(std::string_view name) const {
    return Column(*backend_, backend_->column_index(name));
  }

 private:
  std::unique_ptr<StatementBackend> backend_;
};

// Begins on construction; rolls back on destruction unless committed.
class Transaction {
 public:
  Transaction(Connection& db, TransactionKind kind) : db_(&db) { db.begin(kind); }
  ~Transaction() {
    if (db_ == nullptr) return;
    try {
      db_->rollback();
    } catch (...) {
      // The connection is gone or broken: the database rolls back on its own.
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    db_->commit();
    db_ = nullptr;
  }

 private:
  Connection* db_;
};

}  // namespace kt::db
