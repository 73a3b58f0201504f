// The tests' throw-away PostgreSQL cluster (tests/support/postgres_cluster.cpp).
#include "support/postgres_cluster.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "db/connection.hpp"

namespace kt::test {
namespace {

TEST(PostgresqlCluster, ServesEachTestAFreshDatabase) {
  const std::string first = PostgresCluster::shared().create_database();
  const std::string second = PostgresCluster::shared().create_database();
  EXPECT_NE(first, second);
  db::open_connection(first, db::Access::write)->execute_script("CREATE TABLE only_here (x INT)");
  auto other = db::open_connection(second, db::Access::read);
  db::Statement tables(*other, "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'only_here'");
  ASSERT_TRUE(tables.step());
  EXPECT_EQ(tables.column(0).int64(), 0);
}

// Static destructors run in a forked test child that exits normally: they must leave the
// parent's server and its folder alone.
TEST(PostgresqlCluster, AForkedChildThatExitsNormallyLeavesTheServerRunning) {
  PostgresCluster& cluster = PostgresCluster::shared();
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) std::exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_NO_THROW(db::open_connection(cluster.create_database(), db::Access::write));
}

}  // namespace
}  // namespace kt::test
