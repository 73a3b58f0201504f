// The SQLite backend of db::Connection (SQLiteCpp): a file in WAL mode, so that readers never wait
// for the writer nor the writer for them.
#pragma once

#include <filesystem>
#include <memory>

#include "db/connection.hpp"

namespace kt::db {

// Access::write opens (creating if needed) a writable file, refusing one SQLite would open
// read-only, with foreign keys on, and switches it to WAL once its schema version is known to be
// one this binary understands. Access::read opens an existing file read-only.
std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& path, Access access);

}  // namespace kt::db
