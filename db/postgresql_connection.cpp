#include "db/postgresql_connection.hpp"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <charconv>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "db/dialect.hpp"

namespace kt::db {
namespace {

// PostgreSQL's type OIDs (catalog/pg_type.h is a server header) for typed parameters: a NULL is
// sent untyped and takes its type from where it is used.
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kFloat8Oid = 701;
constexpr Oid kByteaOid = 17;

// Every write transaction takes this advisory lock first (the key is arbitrary, fixed).
constexpr const char* kBeginWrite = "BEGIN; SELECT pg_advisory_xact_lock(7364012)";

// The libpq functions the backend calls, resolved once from libpq.so.5.
struct Libpq {
// clang-format off
#define KT_LIBPQ_FUNCTIONS(X)                                                               \
  X(PQconnectdb) X(PQstatus) X(PQerrorMessage) X(PQfinish) X(PQsetNoticeProcessor)          \
  X(PQexec) X(PQexecParams) X(PQresultStatus) X(PQresultErrorMessage) X(PQresultErrorField) \
  X(PQclear) X(PQntuples) X(PQnfields) X(PQfname) X(PQgetisnull) X(PQgetvalue)              \
  X(PQcmdTuples) X(PQunescapeBytea) X(PQfreemem) X(PQreset)
// clang-format on
#define KT_LIBPQ_MEMBER(name) decltype(&::name) name = nullptr;
  KT_LIBPQ_FUNCTIONS(KT_LIBPQ_MEMBER)
#undef KT_LIBPQ_MEMBER
};

const Libpq& libpq() {
  static std::once_flag once;
  static Libpq functions;
  static std::string failure;
  std::call_once(once, [] {
    void* library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      failure = std::string("cannot load libpq (install Debian's libpq5): ") + dlerror();
      return;
    }
#define KT_LIBPQ_RESOLVE(name)                                                 \
  functions.name = reinterpret_cast<decltype(&::name)>(dlsym(library, #name)); \
  if (functions.name == nullptr) {                                             \
    failure = "libpq.so.5 lacks " #name;                                       \
    return;                                                                    \
  }
    KT_LIBPQ_FUNCTIONS(KT_LIBPQ_RESOLVE)
#undef KT_LIBPQ_RESOLVE
  });
  if (!failure.empty()) throw DatabaseError(failure);
  return functions;
}

struct ResultDeleter {
  void operator()(PGresult* result) const { libpq().PQclear(result); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

struct ConnectionDeleter {
  void operator()(PGconn* connection) const { libpq().PQfinish(connection); }
};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// SQLSTATEs of a session the server ended or cannot serve yet: class 08 (connection exception),
// admin_shutdown, crash_shutdown, cannot_connect_now. The next use reconnects.
bool connection_state(std::string_view state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

void ignore_notice(void*, const char*) {}

// The libpq connection a Connection and its statements share: it runs SQL, tells a lost server
// (ConnectionLost, and the store's health) from an error in the SQL (DatabaseError), and
// reconnects on the first use after a loss.
class Link {
 public:
  Link(const std::string& uri, Access access, std::shared_ptr<StoreHealth> health)
      : access_(access), health_(std::move(health)) {
    const Libpq& pq = libpq();
    connection_.reset(pq.PQconnectdb(uri.c_str()));
    if (!connection_) throw DatabaseError("out of memory connecting to PostgreSQL");
    if (pq.PQstatus(connection_.get()) != CONNECTION_OK)
      throw DatabaseError(trimmed(pq.PQerrorMessage(connection_.get())));
    // Notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
    pq.PQsetNoticeProcessor(connection_.get(), ignore_notice, nullptr);
    configure();
  }

  // The connection, reconnected first if it was lost; ConnectionLost while the server is away.
  PGconn* live() {
    if (!broken_) return connection_.get();
    const Libpq& pq = libpq();
    pq.PQreset(connection_.get());
    if (pq.PQstatus(connection_.get()) != CONNECTION_OK)
      lose(trimmed(pq.PQerrorMessage(connection_.get())));
    broken_ = false;
    configure();
    health_->restored();
    return connection_.get();
  }
  bool broken() const { return broken_; }

  // The result, or DatabaseError with the server's message and SQLSTATE (ConnectionLost when the
  // connection is gone).
  Result checked(PGresult* raw, std::string_view sql) {
    const Libpq& pq = libpq();
    Result result(raw);
    if (!result) {
      const std::string message = trimmed(pq.PQerrorMessage(connection_.get()));
      if (pq.PQstatus(connection_.get()) == CONNECTION_BAD) lose_or_reconnect(message);
      throw DatabaseError(message);
    }
    const ExecStatusType status = pq.PQresultStatus(result.get());
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    const char* state = pq.PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
    const std::string message = trimmed(pq.PQresultErrorMessage(result.get()));
    // No SQLSTATE: libpq's own error, the server never answered (after a failed send libpq may
    // still report the connection as OK until its next read).
    if (pq.PQstatus(connection_.get()) == CONNECTION_BAD || state == nullptr ||
        connection_state(state))
      lose_or_reconnect(message);
    throw DatabaseError(message + " (postgresql SQLSTATE " + (state != nullptr ? state : "?") +
                        ") in: " + std::string(sql));
  }

 private:
  [[noreturn]] void lose(const std::string& message) {
    broken_ = true;
    health_->lost(message);
    throw ConnectionLost("lost the PostgreSQL connection: " + message, health_);
  }
  // A connection that died while the server is up again (an idle one, after an outage others
  // already saw end) reconnects at once and is no new outage; the operation still runs again.
  [[noreturn]] void lose_or_reconnect(const std::string& message) {
    if (reconnecting_) lose(message);
    reconnecting_ = true;
    const Libpq& pq = libpq();
    pq.PQreset(connection_.get());
    const bool back = pq.PQstatus(connection_.get()) == CONNECTION_OK;
    if (back) {
      try {
        configure();
      } catch (...) {
        reconnecting_ = false;
        throw;
      }
    }
    reconnecting_ = false;
    if (!back) lose(message);
    health_->restored();
    throw ConnectionLost("the PostgreSQL connection was lost and is back: " + message, health_);
  }
  // The session's settings, again after every reconnect.
  void configure() {
    if (access_ == Access::read)
      checked(libpq().PQexec(connection_.get(), "SET default_transaction_read_only = on"),
              "SET default_transaction_read_only = on");
  }

  Access access_;
  std::shared_ptr<StoreHealth> health_;
  std::unique_ptr<PGconn, ConnectionDeleter> connection_;
  bool broken_ = false;
  bool reconnecting_ = false;  // within lose_or_reconnect: a second loss is an outage
};

class PostgresStatement final : public StatementBackend {
 public:
  PostgresStatement(Link& link, std::string_view sqlite_sql, const StatementObserver* observer)
      : link_(link), observer_(observer) {
    int count = 0;
    sql_ = postgresql_placeholders(sqlite_sql, &count);
    parameters_.resize(count);  // unbound: NULL
  }

  void bind(int index, std::int64_t value) override {
    set(index, std::to_string(value), kInt8Oid, 0);
  }
  void bind(int index, double value) override {
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;  // round-trips
    set(index, std::string(buffer, end), kFloat8Oid, 0);
  }
  void bind(int index, const std::string& value) override { set(index, value, kTextOid, 0); }
  void bind_blob(int index, const std::vector<char>& bytes) override {
    set(index, std::string(bytes.begin(), bytes.end()), kByteaOid, 1);
  }
  void bind_null(int index) override { slot(index) = Parameter{}; }
  bool step() override {
    if (!result_) run();
    return ++row_ < libpq().PQntuples(result_.get());
  }
  std::int64_t exec() override {
    run();
    const char* changed = libpq().PQcmdTuples(result_.get());
    return changed[0] == '\0' ? 0 : std::strtoll(changed, nullptr, 10);
  }
  void reset() override {
    result_.reset();
    row_ = -1;
  }
  int column_index(std::string_view name) const override {
    // A map, not PQfnumber (a scan with a copy of the name): rows are read column by name.
    if (columns_.empty() && result_)
      for (int i = 0; i < libpq().PQnfields(result_.get()); ++i)
        columns_.emplace(libpq().PQfname(result_.get(), i), i);
    const auto found = columns_.find(name);
    if (found == columns_.end())
      throw DatabaseError("no column " + std::string(name) + " in: " + sql_);
    return found->second;
  }
  bool is_null(int column) const override {
    return libpq().PQgetisnull(current(), row_, column) == 1;
  }
  // A NULL reads as 0 (and as "" for text), as SQLite converts it.
  std::int64_t int64(int column) const override {
    if (is_null(column)) return 0;
    const std::string_view text = value(column);
    std::int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error == std::errc() && end == text.data() + text.size()) return number;
    return static_cast<std::int64_t>(real(column));  // a numeric, e.g. SUM() of integers
  }
  // from_chars, not strtod: the text is PostgreSQL's, whatever the process's locale.
  double real(int column) const override {
    if (is_null(column)) return 0;
    const std::string_view text = value(column);
    double number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size())
      throw DatabaseError("column " + std::to_string(column) + " holds '" + std::string(text) +
                          "', not a number, in: " + sql_);
    return number;
  }
  std::string text(int column) const override { return value(column); }
  std::vector<char> blob(int column) const override {
    std::size_t length = 0;
    unsigned char* bytes =
        libpq().PQunescapeBytea(reinterpret_cast<const unsigned char*>(value(column)), &length);
    if (bytes == nullptr) throw DatabaseError("cannot decode a bytea column (out of memory)");
    std::vector<char> out(bytes, bytes + length);
    libpq().PQfreemem(bytes);
    return out;
  }

 private:
  struct Parameter {
    std::optional<std::string> value;  // nullopt: NULL
    Oid type = 0;
    int format = 0;  // 0 text, 1 binary
  };

  Parameter& slot(int index) {
    if (index < 1) throw DatabaseError("parameter index " + std::to_string(index) + " < 1");
    if (static_cast<std::size_t>(index) > parameters_.size()) parameters_.resize(index);
    return parameters_[index - 1];
  }
  void set(int index, std::string value, Oid type, int format) {
    slot(index) = Parameter{std::move(value), type, format};
  }
  void run() {
    if (observer_ != nullptr) (*observer_)(sql_);
    std::vector<Oid> types;
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (const Parameter& p : parameters_) {
      types.push_back(p.value ? p.type : 0);
      values.push_back(p.value ? p.value->data() : nullptr);
      lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
      formats.push_back(p.format);
    }
    columns_.clear();
    result_.reset();
    PGconn* connection = link_.live();
    result_ = link_.checked(
        libpq().PQexecParams(connection, sql_.c_str(), static_cast<int>(parameters_.size()),
                             types.data(), values.data(), lengths.data(), formats.data(), 0),
        sql_);
    row_ = -1;
  }
  PGresult* current() const {
    if (!result_ || row_ < 0 || row_ >= libpq().PQntuples(result_.get()))
      throw DatabaseError("no current row in: " + sql_);
    return result_.get();
  }
  const char* value(int column) const { return libpq().PQgetvalue(current(), row_, column); }

  Link& link_;
  std::string sql_;
  const StatementObserver* observer_;
  std::vector<Parameter> parameters_;
  Result result_;
  mutable std::map<std::string, int, std::less<>> columns_;  // of result_, filled on first use
  int row_ = -1;
};

class PostgresConnection final : public Connection {
 public:
  PostgresConnection(const std::string& uri, Access access, std::shared_ptr<StoreHealth> health)
      : link_(uri, access, std::move(health)) {}

  Dialect dialect() const override { return Dialect::postgresql; }
  std::unique_ptr<StatementBackend> prepare(std::string_view sql) override {
    return std::make_unique<PostgresStatement>(link_, sql, observer_);
  }
  void execute_script(const std::string& sql) override {
    if (observer_ != nullptr) (*observer_)(sql);
    PGconn* connection = link_.live();
    link_.checked(libpq().PQexec(connection, sql.c_str()), sql);
  }
  void begin(TransactionKind kind) override {
    execute_script(kind == TransactionKind::write
                       ? kBeginWrite
                       : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  void commit() override { execute_script("COMMIT"); }
  // Nothing to roll back on a lost connection: the server ended the transaction with it.
  void rollback() override {
    if (!link_.broken()) execute_script("ROLLBACK");
  }
  void observe(const StatementObserver* observer) override { observer_ = observer; }

 private:
  Link link_;
  const StatementObserver* observer_ = nullptr;
};

}  // namespace

std::unique_ptr<Connection> open_postgresql(const std::string& uri, Access access,
                                            std::shared_ptr<StoreHealth> health) {
  if (!health) health = std::make_shared<StoreHealth>("postgresql");
  return std::make_unique<PostgresConnection>(uri, access, std::move(health));
}

}  // namespace kt::db
