// The store's schema as numbered migration steps, one history for both backends (db/dialect.hpp
// translates a step for PostgreSQL). The version lives in PRAGMA user_version (SQLite) or the
// table kerntune_schema (PostgreSQL); each step runs in its own write transaction together with
// the version bump, so a crash mid-migration leaves the previous version intact.
#pragma once

#include "db/connection.hpp"

namespace kt::db {

// The newest schema this binary knows.
int latest_schema_version();

// The schema version of the open database (0 for a fresh one).
int read_schema_version(Connection& db);

// Throws std::runtime_error when the database was written by a newer kerntune (its version is
// above latest_schema_version()). Call before changing anything in the file.
void require_known_version(Connection& db);

// Applies every step newer than the database's version (require_known_version first).
void migrate(Connection& db);

}  // namespace kt::db
