// The PostgreSQL backend of db::Connection, over libpq. libpq is loaded when the first PostgreSQL
// connection opens, not linked: a daemon on SQLite starts on a host without it (a GPU machine with
// only the build folder), and one asked for PostgreSQL there says which library is missing.
#pragma once

#include <memory>
#include <string>

#include "db/connection.hpp"

namespace kt::db {

// Connects to the URI (postgresql://user@host:port/db?...). Access::read makes every transaction
// of the connection read-only. Writers serialize their write transactions on an advisory lock, as
// SQLite's writers do on its write lock. A connection that loses the server throws ConnectionLost
// (telling health) and reconnects on its next use (PQreset), with its session settings again.
std::unique_ptr<Connection> open_postgresql(const std::string& uri, Access access,
                                            std::shared_ptr<StoreHealth> health = nullptr);

}  // namespace kt::db
