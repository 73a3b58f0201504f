// The store's schema as numbered migration steps. The version lives in PRAGMA user_version; each
// step runs in its own transaction together with the version bump, so a crash mid-migration
// leaves the previous version intact.
#pragma once

namespace SQLite {
class Database;
}

namespace kt::db {

// The newest schema this binary knows.
int latest_schema_version();

// PRAGMA user_version of the open database (0 for a fresh file).
int read_schema_version(SQLite::Database& db);

// Throws std::runtime_error when the database was written by a newer kerntune (its version is
// above latest_schema_version()). Call before changing anything in the file.
void require_known_version(SQLite::Database& db);

// Applies every step newer than the database's version (require_known_version first).
void migrate(SQLite::Database& db);

}  // namespace kt::db
