// The SQLite backend of db::Connection (SQLiteCpp): a file in WAL mode, so that readers never wait
// for the writer nor the writer for them.
#pragma once

#include <filesystem>
#include <memory>

#include "db/connection.hpp"

namespace kt::db {

// Access::write opens (creating if needed) a writable file, refusing one SQLite would open
// read-only, with foreign keys on, and switches it to WAL once its schema version is known to be
// one this binary understands. Access::read opens an existing file read-only. Once the writer is
// open, an error that says the file stopped taking writes (read-only, disk full, I/O error, a
// journal it cannot create) throws ConnectionLost and begins an outage of health (when given), as
// a lost PostgreSQL server does; the next write that reaches the file ends it.
std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& path, Access access,
                                        std::shared_ptr<StoreHealth> health = nullptr);

}  // namespace kt::db
