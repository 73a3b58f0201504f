// Internal to db/: reading store records out of SQLite rows, and the shared bits every part of
// kt::Store uses (timestamps, error context). Callers hold the Store's mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "db/store.hpp"

namespace kt::db {

// ISO 8601 UTC with milliseconds, evaluated by SQLite: "2025-01-31T12:34:56.789Z".
inline constexpr const char* kNowSql = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

// Every column of jobs, in the order read_job expects.
extern const char* const kJobSelect;
// variants LEFT JOIN measurements as v and m; append WHERE/ORDER BY.
extern const char* const kVariantSelect;

JobRecord read_job(const SQLite::Statement& row);
VariantRecord read_variant(const SQLite::Statement& row);

std::optional<JobRecord> load_job(SQLite::Database& db, std::int64_t id);
std::optional<VariantRecord> load_variant(SQLite::Database& db, std::int64_t id);
// gated_only: leave out variants that never reached a gate (pruned, unsupported_arch).
std::vector<VariantRecord> load_variants(SQLite::Database& db, std::int64_t job_id,
                                         bool gated_only = false);
// One page in id order (see Store::variant_page); reads at most query.limit + 1 rows.
VariantPage load_variant_page(SQLite::Database& db, std::int64_t job_id,
                              const VariantPageQuery& query);
// The measured variant of the job with the lowest median time.
std::optional<VariantRecord> load_fastest_variant(SQLite::Database& db, std::int64_t job_id);

// Runs fn, turning a SQLite::Exception into std::runtime_error that says which operation failed.
template <typename Fn>
auto with_context(std::string_view operation, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error("kerntune store: " + std::string(operation) + ": " + e.what() +
                             " (sqlite code " + std::to_string(e.getExtendedErrorCode()) + ")");
  }
}

}  // namespace kt::db
