// The SQLite backend's reuse of prepared statements (db/sqlite_connection.cpp): a statement taken
// again must behave as one prepared anew.
#include "db/sqlite_connection.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_paths.hpp"

namespace kt::db {
namespace {

std::int64_t count_rows(Connection& db) {
  Statement count(db, "SELECT COUNT(*) FROM t");
  EXPECT_TRUE(count.step());
  return count.column(0).int64();
}

TEST(SqliteConnection, AReusedStatementStartsWithEveryParameterNull) {
  test::TempDir dir;
  auto db = open_sqlite(dir.path() / "k.db", Access::write);
  {
    Statement first(*db, "SELECT ?1 IS NULL, ?2");
    first.bind(1, std::int64_t{5});
    first.bind(2, "bound before");
    ASSERT_TRUE(first.step());
    EXPECT_EQ(first.column(0).int64(), 0);
  }
  Statement again(*db, "SELECT ?1 IS NULL, ?2");
  ASSERT_TRUE(again.step());
  EXPECT_EQ(again.column(0).int64(), 1);
  EXPECT_TRUE(again.column(1).is_null());
}

TEST(SqliteConnection, AStatementLeftMidRowsHoldsNoSnapshotOnceItEnds) {
  test::TempDir dir;
  auto writer = open_sqlite(dir.path() / "k.db", Access::write);
  writer->execute_script("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)");
  auto reader = open_sqlite(dir.path() / "k.db", Access::read);
  {
    Statement rows(*reader, "SELECT x FROM t ORDER BY x");
    ASSERT_TRUE(rows.step());  // one row read, the second never asked for
  }
  Statement insert(*writer, "INSERT INTO t VALUES (?1)");
  insert.bind(1, std::int64_t{3});
  insert.exec();
  // The reader's next statement sees the new row: the abandoned one's read ended with it.
  EXPECT_EQ(count_rows(*reader), 3);
  Statement rows(*reader, "SELECT x FROM t ORDER BY x");
  int seen = 0;
  while (rows.step()) ++seen;
  EXPECT_EQ(seen, 3);
}

TEST(SqliteConnection, AStatementWhoseRunFailedWorksWhenPreparedAgain) {
  test::TempDir dir;
  auto db = open_sqlite(dir.path() / "k.db", Access::write);
  db->execute_script("CREATE TABLE t (x INTEGER PRIMARY KEY)");
  const char* insert_sql = "INSERT INTO t VALUES (?1)";
  {
    Statement insert(*db, insert_sql);
    insert.bind(1, std::int64_t{1});
    EXPECT_EQ(insert.exec(), 1);
  }
  {
    Statement duplicate(*db, insert_sql);
    duplicate.bind(1, std::int64_t{1});
    EXPECT_THROW(duplicate.exec(), DatabaseError);
  }
  Statement insert(*db, insert_sql);
  insert.bind(1, std::int64_t{2});
  EXPECT_EQ(insert.exec(), 1);
  EXPECT_EQ(count_rows(*db), 2);
}

TEST(SqliteConnection, TwoLiveStatementsOfOneSqlRunApart) {
  test::TempDir dir;
  auto db = open_sqlite(dir.path() / "k.db", Access::write);
  db->execute_script("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)");
  const char* sql = "SELECT x FROM t WHERE x >= ?1 ORDER BY x";
  for (int round = 0; round < 3; ++round) {  // the second and third take cached statements
    Statement outer(*db, sql);
    outer.bind(1, std::int64_t{2});
    ASSERT_TRUE(outer.step());
    EXPECT_EQ(outer.column(0).int64(), 2);
    Statement inner(*db, sql);
    inner.bind(1, std::int64_t{1});
    ASSERT_TRUE(inner.step());
    EXPECT_EQ(inner.column(0).int64(), 1);
    ASSERT_TRUE(outer.step());
    EXPECT_EQ(outer.column(0).int64(), 3);
    EXPECT_FALSE(outer.step());
  }
}

}  // namespace
}  // namespace kt::db
