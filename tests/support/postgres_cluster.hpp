// A throw-away PostgreSQL cluster for the store's tests: initdb into a temporary folder, the server
// listening only on a unix socket there, stopped and removed when the test process ends. Run as
// root (CI containers), the server runs as the user "nobody": initdb and postgres refuse root.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "support/test_paths.hpp"

namespace kt::test {

class PostgresCluster {
 public:
  // The process's cluster, started on first use. std::runtime_error (which fails the test, never
  // skips it) when PostgreSQL's server binaries are missing or the server does not come up; the
  // message says what to install or shows the server's log.
  static PostgresCluster& shared();
  // A cluster of the caller's own, for a test that stops and restarts the server.
  static std::unique_ptr<PostgresCluster> own();

  // Immediate shutdown, as `pg_ctl stop -m immediate` (SIGQUIT: sessions cut, no checkpoint; the
  // next start recovers from the WAL); returns once the server has exited.
  void stop_immediately();
  // Starts the stopped server again on the same folder; returns once it accepts connections.
  void restart();

  // A new, empty database of the cluster; returns its postgresql:// URI.
  std::string create_database();

  ~PostgresCluster();
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

 private:
  PostgresCluster();
  void start_server();
  std::string uri(const std::string& database) const;

  // Owned by the process that started the server: a forked test child that exits normally must
  // neither stop the server nor remove its folder.
  pid_t owner_;
  std::unique_ptr<TempDir> dir_;
  pid_t server_ = -1;
  std::string bindir_;
  std::mutex mutex_;
  int databases_ = 0;
};

// The folder holding initdb and postgres: `pg_config --bindir`, else the newest
// /usr/lib/postgresql/<version>/bin; "" if neither has them.
std::string postgres_bindir();

}  // namespace kt::test
