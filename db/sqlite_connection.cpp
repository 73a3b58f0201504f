#include "db/sqlite_connection.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include "db/schema.hpp"

namespace kt::db {
namespace {

// Long enough to ride out another process's checkpoint or write burst, short enough that a
// wedged writer shows up as an error rather than a hung daemon.
constexpr int kBusyTimeoutMs = 10000;

template <typename Fn>
auto translated(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const SQLite::Exception& e) {
    throw DatabaseError(std::string(e.what()) + " (sqlite code " +
                        std::to_string(e.getExtendedErrorCode()) + ")");
  }
}

class SqliteStatement final : public StatementBackend {
 public:
  SqliteStatement(SQLite::Database& db, std::string_view sql)
      : statement_(translated([&] { return SQLite::Statement(db, std::string(sql)); })) {}

  void bind(int index, std::int64_t value) override {
    translated([&] { statement_.bind(index, value); });
  }
  void bind(int index, double value) override {
    translated([&] { statement_.bind(index, value); });
  }
  void bind(int index, const std::string& value) override {
    translated([&] { statement_.bind(index, value); });
  }
  void bind_blob(int index, const std::vector<char>& bytes) override {
    // An empty vector's data() may be null, which SQLite would store as NULL, not an empty blob.
    static const char kNoBytes = 0;
    translated([&] {
      statement_.bind(index, bytes.empty() ? &kNoBytes : bytes.data(),
                      static_cast<int>(bytes.size()));
    });
  }
  void bind_null(int index) override {
    translated([&] { statement_.bind(index); });
  }
  bool step() override {
    return translated([&] { return statement_.executeStep(); });
  }
  std::int64_t exec() override {
    return translated([&] {
      // exec() refuses a statement that returns rows; an upsert's RETURNING is read by step().
      while (statement_.executeStep()) {
      }
      return static_cast<std::int64_t>(statement_.getChanges());
    });
  }
  void reset() override {
    translated([&] { statement_.reset(); });
  }
  int column_index(std::string_view name) const override {
    return translated([&] { return statement_.getColumnIndex(std::string(name).c_str()); });
  }
  bool is_null(int column) const override {
    return translated([&] { return statement_.isColumnNull(column); });
  }
  std::int64_t int64(int column) const override {
    return translated([&] { return statement_.getColumn(column).getInt64(); });
  }
  double real(int column) const override {
    return translated([&] { return statement_.getColumn(column).getDouble(); });
  }
  std::string text(int column) const override {
    return translated([&] { return statement_.getColumn(column).getString(); });
  }
  std::vector<char> blob(int column) const override {
    return translated([&] {
      const SQLite::Column value = statement_.getColumn(column);
      const auto* bytes = static_cast<const char*>(value.getBlob());
      return bytes == nullptr ? std::vector<char>()
                              : std::vector<char>(bytes, bytes + value.getBytes());
    });
  }

 private:
  SQLite::Statement statement_;
};

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

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(const std::filesystem::path& path, int flags)
      : db_(translated([&] { return SQLite::Database(path, flags, kBusyTimeoutMs); })) {}

  Dialect dialect() const override { return Dialect::sqlite; }
  std::unique_ptr<StatementBackend> prepare(std::string_view sql) override {
    return std::make_unique<SqliteStatement>(db_, sql);
  }
  void execute_script(const std::string& sql) override {
    translated([&] { db_.exec(sql); });
  }
  void begin(TransactionKind kind) override {
    // IMMEDIATE takes the write lock at once, so two writers never both read and then collide.
    execute_script(kind == TransactionKind::write ? "BEGIN IMMEDIATE" : "BEGIN");
  }
  void commit() override { execute_script("COMMIT"); }
  void rollback() override { execute_script("ROLLBACK"); }
  void observe(const StatementObserver* observer) override {
    if (observer == nullptr)
      sqlite3_trace_v2(db_.getHandle(), 0, nullptr, nullptr);
    else
      sqlite3_trace_v2(db_.getHandle(), SQLITE_TRACE_STMT, trace_statement,
                       const_cast<StatementObserver*>(observer));
  }
  SQLite::Database& database() { return db_; }

 private:
  SQLite::Database db_;
};

}  // namespace

std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& path, Access access) {
  if (access == Access::read) {
    auto reader = std::make_unique<SqliteConnection>(path, SQLite::OPEN_READONLY);
    reader->execute_script("PRAGMA query_only = ON");
    return reader;
  }
  auto writer =
      std::make_unique<SqliteConnection>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  // SQLite quietly opens a write-protected file (mode bits, read-only file system, immutable) in
  // read-only mode, and then every write fails: refuse such a file here.
  if (sqlite3_db_readonly(writer->database().getHandle(), "main") == 1)
    throw DatabaseError("the file is read-only for this user: make it writable (chmod u+w " +
                        path.string() + ") or pass --db with a writable file");
  writer->execute_script("PRAGMA foreign_keys = ON");
  // A database from a newer kerntune must not be touched, not even its journal mode.
  require_known_version(*writer);
  const std::string mode = translated(
      [&] { return writer->database().execAndGet("PRAGMA journal_mode = WAL").getString(); });
  if (mode != "wal")
    throw DatabaseError("the file system refused WAL journal mode (got '" + mode + "')");
  // With WAL, NORMAL loses nothing when the process is killed (only on power loss may the last
  // commits roll back), and it spares an fsync per transaction.
  writer->execute_script("PRAGMA synchronous = NORMAL");
  return writer;
}

}  // namespace kt::db
