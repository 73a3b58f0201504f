// Internal to db/: reading store records out of rows, and the shared bits every part of
// kt::Store uses (timestamps, error context). Callers hold the Store's mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/connection.hpp"
#include "db/dialect.hpp"
#include "db/model.hpp"
#include "db/retry_wait.hpp"
#include "db/variant_store.hpp"

namespace kt::db {

// Every column of jobs, in the order read_job expects.
extern const char* const kJobSelect;
// variants LEFT JOIN measurements as v and m; append WHERE/ORDER BY.
extern const char* const kVariantSelect;

JobRecord read_job(const db::Statement& row);
VariantRecord read_variant(const db::Statement& row);

std::optional<JobRecord> load_job(db::Connection& db, std::int64_t id);
std::optional<VariantRecord> load_variant(db::Connection& db, std::int64_t id);
// gated_only: leave out variants that never reached a gate (pruned, unsupported_arch).
std::vector<VariantRecord> load_variants(db::Connection& db, std::int64_t job_id,
                                         bool gated_only = false);
// One page in id order (see Store::variant_page); reads at most query.limit + 1 rows.
VariantPage load_variant_page(db::Connection& db, std::int64_t job_id,
                              const VariantPageQuery& query);
// The measured variant of the job with the lowest median time.
std::optional<VariantRecord> load_fastest_variant(db::Connection& db, std::int64_t job_id);

// A family's source files as the store keeps them (a JSON object of file name -> text), both ways.
std::string sources_to_json(const std::vector<std::pair<std::string, std::string>>& sources);
std::vector<std::pair<std::string, std::string>> sources_from_json(const std::string& text);

// Runs fn, turning a DatabaseError into std::runtime_error that says which operation failed.
// When fn lost the database connection (or the SQLite file stopped taking writes) it runs again
// (it reconnects first), after a pause that grows from 0.1 s to 5 s and during which other writes
// may run, until the database answers: fn must be a whole operation (its own transactions), safe
// to run again. Only the outermost with_context of a thread retries: an inner one is part of its
// caller's transaction, which must run again as a whole. On a FailFastOnOutage thread, or once the
// store gave up waiting (the daemon stops), a lost connection is StoreUnavailable at once.
inline thread_local int operations_in_progress = 0;

template <typename Fn>
auto with_context(std::string_view operation, Fn&& fn) -> decltype(fn()) {
  struct Depth {
    Depth() { ++operations_in_progress; }
    ~Depth() { --operations_in_progress; }
  };
  for (int attempt = 0;; ++attempt) {
    try {
      const Depth depth;
      return fn();
    } catch (const ConnectionLost& e) {
      if (operations_in_progress > 0) throw;  // the outer operation runs again
      if (FailFastOnOutage::active() || e.health() == nullptr ||
          !wait_to_retry(*e.health(), attempt))
        throw StoreUnavailable("kerntune store: " + std::string(operation) +
                               ": the database is unavailable: " + e.what());
    } catch (const DatabaseError& e) {
      throw std::runtime_error("kerntune store: " + std::string(operation) + ": " + e.what());
    }
  }
}

}  // namespace kt::db
