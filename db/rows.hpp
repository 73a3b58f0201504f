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
#include "db/store.hpp"

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
template <typename Fn>
auto with_context(std::string_view operation, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const DatabaseError& e) {
    throw std::runtime_error("kerntune store: " + std::string(operation) + ": " + e.what());
  }
}

}  // namespace kt::db
