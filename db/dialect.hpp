// Where SQLite's and PostgreSQL's SQL differ, in one place. The store's statements and the schema's
// migration steps are written once, in SQLite's dialect restricted to what PostgreSQL also
// understands (ON CONFLICT upserts, RETURNING, CASE, window functions); what cannot be written
// that way is translated here.
#pragma once

#include <string>
#include <string_view>

#include "db/connection.hpp"

namespace kt::db {

// An expression for the current time as ISO 8601 UTC text with milliseconds:
// "2025-01-31T12:34:56.789Z".
std::string now_sql(Dialect dialect);

// An expression for the current time in milliseconds since the Unix epoch (an integer), the
// clock of a lease: the database's, so daemons on hosts with skewed clocks agree on expiries.
std::string now_ms_sql(Dialect dialect);

// What follows a SELECT that claims rows for an update: PostgreSQL locks them and skips rows
// another transaction holds ("FOR UPDATE SKIP LOCKED"); SQLite has one writer and no such
// clause, so nothing.
std::string claim_rows_sql(Dialect dialect);

// A migration step's DDL in the dialect. SQLite's text is the source; for PostgreSQL its types
// become their PostgreSQL equivalents: INTEGER (64-bit in SQLite) -> BIGINT, REAL (double in
// SQLite) -> DOUBLE PRECISION, BLOB -> BYTEA, INTEGER PRIMARY KEY [AUTOINCREMENT] -> an identity
// column, and WITHOUT ROWID is dropped.
std::string schema_sql(std::string_view sqlite_sql, Dialect dialect);

// The column, written so that SQLite's planner does not pick an index on it ("+column"); as is
// for PostgreSQL, whose planner needs the bare column to use its statistics (with "+" it takes
// the condition for a rare one and scans the table).
std::string not_by_index(std::string_view column, Dialect dialect);

// ? and ?N placeholders become PostgreSQL's $N; a bare ? takes the number after the largest one
// so far, as in SQLite. Text in quotes is left alone. *parameters (if given) is set to the largest
// number: parameters up to it that are never bound are sent as NULL, as SQLite reads them.
std::string postgresql_placeholders(std::string_view sql, int* parameters = nullptr);

}  // namespace kt::db
