#include "db/sqlite_connection.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/schema.hpp"

namespace kt::db {
namespace {

// Long enough to ride out another process's checkpoint or write burst, short enough that a
// wedged writer shows up as an error rather than a hung daemon.
constexpr int kBusyTimeoutMs = 10000;

// Errors that say the file stopped taking writes (write-protected, disk full, an I/O error, a
// journal it cannot create), not that the SQL is wrong: the same statement may work once the file
// takes writes again, so for the writer they are an outage of the store, like a lost PostgreSQL.
bool stops_writes(int code) {
  switch (code & 0xff) {
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
      return true;
    default:
      return false;
  }
}

// The writer's side of the store's health: an error that stops writes begins (or continues) an
// outage, and the next write that reaches the file ends it. Readers have none: a read that works
// while writes fail says nothing about the file taking writes again.
class WriteHealth {
 public:
  explicit WriteHealth(std::shared_ptr<StoreHealth> health) : health_(std::move(health)) {}

  [[noreturn]] void lost(const std::string& message) {
    failing_ = true;
    health_->lost(message);
    throw ConnectionLost("the SQLite file takes no writes: " + message, health_);
  }
  void wrote() {
    if (!failing_) return;
    failing_ = false;
    health_->restored();
  }

 private:
  std::shared_ptr<StoreHealth> health_;
  bool failing_ = false;  // only the writer's thread (under the store's writer lock) touches it
};

template <typename Fn>
auto translated(Fn&& fn, WriteHealth* writes = nullptr) -> decltype(fn()) {
  try {
    return fn();
  } catch (const SQLite::Exception& e) {
    const std::string message =
        std::string(e.what()) + " (sqlite code " + std::to_string(e.getExtendedErrorCode()) + ")";
    if (writes != nullptr &&
        (stops_writes(e.getErrorCode()) || stops_writes(e.getExtendedErrorCode())))
      writes->lost(message);
    throw DatabaseError(message);
  }
}

// A connection's prepared statements kept for reuse: preparing the store's longer queries costs
// more than running them on a small table (parsing and planning a SELECT with joins takes a tenth
// of a millisecond or more), and a predicted /v1/best answer runs two such queries. A statement is
// taken out while a Statement owns it and put back, reset and with its bindings cleared, when that
// ends; one that cannot be reset (its last run failed) is dropped. Used by the connection's one
// thread at a time, as the connection is.
class StatementCache {
 public:
  // Enough for every fixed query of the store; SQL built per call (filters) is kept too until
  // this many are held, and then prepared anew each time.
  static constexpr std::size_t kMaxHeld = 128;

  std::optional<SQLite::Statement> take(const std::string& sql) {
    const auto it = held_.find(sql);
    if (it == held_.end() || it->second.empty()) return std::nullopt;
    std::optional<SQLite::Statement> statement(std::move(it->second.back()));
    it->second.pop_back();
    --count_;
    return statement;
  }
  void put(const std::string& sql, SQLite::Statement&& statement) noexcept {
    if (count_ >= kMaxHeld) return;
    try {
      // Reset: one left mid-rows would hold its read snapshot open; then every parameter NULL.
      if (statement.tryReset() != SQLITE_OK) return;
      statement.clearBindings();
      held_[sql].push_back(std::move(statement));
      ++count_;
    } catch (...) {
      // Not kept: it is finalized as any statement not reused would be.
    }
  }

 private:
  std::unordered_map<std::string, std::vector<SQLite::Statement>> held_;
  std::size_t count_ = 0;
};

class SqliteStatement final : public StatementBackend {
 public:
  // The connection's cached statement of this SQL when it holds one, else one prepared now.
  SqliteStatement(SQLite::Database& db, std::string_view sql, WriteHealth* writes,
                  StatementCache& cache)
      : sql_(sql),
        statement_(prepared(db, sql_, writes, cache)),
        db_(db),
        writes_(writes),
        cache_(cache) {}
  ~SqliteStatement() override { cache_.put(sql_, std::move(statement_)); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

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
    started();
    const bool row = translated([&] { return statement_.executeStep(); }, writes_);
    if (!row) finished();
    return row;
  }
  std::int64_t exec() override {
    started();
    const std::int64_t changes = translated(
        [&] {
          // exec() refuses a statement that returns rows; an upsert's RETURNING is read by step().
          while (statement_.executeStep()) {
          }
          return static_cast<std::int64_t>(statement_.getChanges());
        },
        writes_);
    finished();
    return changes;
  }
  void reset() override {
    changes_at_start_ = -1;
    translated([&] { statement_.reset(); }, writes_);
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
  static SQLite::Statement prepared(SQLite::Database& db, const std::string& sql,
                                    WriteHealth* writes, StatementCache& cache) {
    std::optional<SQLite::Statement> held = cache.take(sql);
    if (held) return std::move(*held);
    return translated([&] { return SQLite::Statement(db, sql); }, writes);
  }
  void started() {
    if (writes_ != nullptr && changes_at_start_ < 0)
      changes_at_start_ = sqlite3_total_changes64(db_.getHandle());
  }
  // A statement that changed rows and ran to its end outside a transaction committed them: the
  // file took a write.
  void finished() {
    if (writes_ != nullptr && sqlite3_get_autocommit(db_.getHandle()) != 0 &&
        sqlite3_total_changes64(db_.getHandle()) > changes_at_start_)
      writes_->wrote();
    changes_at_start_ = -1;
  }

  std::string sql_;  // before statement_: prepared from it
  SQLite::Statement statement_;
  SQLite::Database& db_;
  WriteHealth* writes_;
  StatementCache& cache_;
  std::int64_t changes_at_start_ = -1;  // the connection's change count when this run began
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
    return std::make_unique<SqliteStatement>(db_, sql, writes_.get(), cache_);
  }
  void execute_script(const std::string& sql) override {
    translated([&] { db_.exec(sql); }, writes_.get());
  }
  void begin(TransactionKind kind) override {
    // IMMEDIATE takes the write lock at once, so two writers never both read and then collide.
    execute_script(kind == TransactionKind::write ? "BEGIN IMMEDIATE" : "BEGIN");
    changes_at_begin_ = sqlite3_total_changes64(db_.getHandle());
  }
  void commit() override {
    execute_script("COMMIT");
    // A transaction that changed rows committed: the file took a write (one that changed
    // nothing wrote nothing, and proves nothing).
    if (writes_ && sqlite3_total_changes64(db_.getHandle()) > changes_at_begin_) writes_->wrote();
  }
  void rollback() override { execute_script("ROLLBACK"); }
  void observe(const StatementObserver* observer) override {
    if (observer == nullptr)
      sqlite3_trace_v2(db_.getHandle(), 0, nullptr, nullptr);
    else
      sqlite3_trace_v2(db_.getHandle(), SQLITE_TRACE_STMT, trace_statement,
                       const_cast<StatementObserver*>(observer));
  }
  SQLite::Database& database() { return db_; }
  // From now on an error that stops writes is an outage of health (ConnectionLost).
  void report_writes_to(std::shared_ptr<StoreHealth> health) {
    writes_ = std::make_unique<WriteHealth>(std::move(health));
  }

 private:
  SQLite::Database db_;
  std::unique_ptr<WriteHealth> writes_;
  std::int64_t changes_at_begin_ = 0;
  // After db_ and writes_: its statements are finalized before the database closes.
  StatementCache cache_;
};

}  // namespace

std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& path, Access access,
                                        std::shared_ptr<StoreHealth> health) {
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
  // Only once open: a file that cannot be opened or set up stops the start with its reason.
  if (health) writer->report_writes_to(std::move(health));
  return writer;
}

}  // namespace kt::db
