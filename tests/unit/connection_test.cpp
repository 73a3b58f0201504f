// Choosing the backend from --db, errors that carry the database's own message, and what a
// PostgreSQL store refuses (db/connection.cpp, db/postgresql_connection.cpp, db/schema.cpp).
#include "db/connection.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <thread>

#include "db/store.hpp"
#include "support/postgres_cluster.hpp"

namespace kt::db {
namespace {

TEST(Connection, OnlyPostgresqlSchemesSelectPostgresql) {
  EXPECT_TRUE(is_postgresql_uri("postgresql://localhost/kerntune"));
  EXPECT_TRUE(is_postgresql_uri("postgres://u@db:5432/k"));
  EXPECT_FALSE(is_postgresql_uri("kerntune.db"));
  EXPECT_FALSE(is_postgresql_uri("/var/lib/postgresql/kerntune.db"));
  EXPECT_FALSE(is_postgresql_uri("./postgresql://x"));
}

TEST(Connection, PasswordsAreRedactedFromLocations) {
  EXPECT_EQ(redacted_location("postgresql://kt:s3cret@db:5432/kerntune"),
            "postgresql://kt:***@db:5432/kerntune");
  EXPECT_EQ(redacted_location("postgres://db/kerntune?user=kt&password=s3cret&sslmode=require"),
            "postgres://db/kerntune?user=kt&password=***&sslmode=require");
  EXPECT_EQ(redacted_location("postgresql://kt@db/kerntune"), "postgresql://kt@db/kerntune");
  EXPECT_EQ(redacted_location("/tmp/a:b@c.db"), "/tmp/a:b@c.db");
}

TEST(Connection, AnUnreachableServerIsAnErrorWithLibpqsReasonAndNoPassword) {
  try {
    // Port 1 on loopback: nothing listens there.
    Store store("postgresql://kt:s3cret@127.0.0.1:1/kerntune?connect_timeout=5");
    FAIL() << "a store opened without a server";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot open kerntune database postgresql://kt:***@127.0.0.1:1"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
    EXPECT_NE(message.find("127.0.0.1"), std::string::npos) << message;
  }
}

TEST(PostgresqlConnection, ServerErrorsCarryTheMessageAndSqlstate) {
  auto db = open_connection(test::PostgresCluster::shared().create_database(), Access::write);
  Statement bad(*db, "SELECT no_such_column FROM pg_class");
  try {
    bad.step();
    FAIL() << "a bad query ran";
  } catch (const DatabaseError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no_such_column"), std::string::npos) << message;
    EXPECT_NE(message.find("SQLSTATE 42703"), std::string::npos) << message;
  }
}

TEST(PostgresqlConnection, ValuesRoundTripThroughParameters) {
  auto db = open_connection(test::PostgresCluster::shared().create_database(), Access::write);
  Statement echo(
      *db,
      "SELECT ?1::bigint, ?2::double precision, ?3::text, ?4::bytea, ?5::text,"
      " ?6::double precision, ?7::double precision, SUM(x) FROM (VALUES (2), (3)) AS t(x)");
  echo.bind(1, std::int64_t{-9'000'000'000'000});
  echo.bind(2, 0.1 + 0.2);
  echo.bind(3, std::string("it's \"quoted\" ? and $1"));
  echo.bind_blob(4, std::vector<char>{'a', '\0', '\xff'});
  echo.bind(6, -std::numeric_limits<double>::infinity());
  echo.bind(7, 1e-300);
  ASSERT_TRUE(echo.step());
  EXPECT_EQ(echo.column(0).int64(), -9'000'000'000'000);
  EXPECT_EQ(echo.column(1).real(), 0.1 + 0.2);  // exact: doubles travel as shortest round-trip text
  EXPECT_EQ(echo.column(2).text(), "it's \"quoted\" ? and $1");
  EXPECT_EQ(echo.column(3).blob(), (std::vector<char>{'a', '\0', '\xff'}));
  EXPECT_TRUE(echo.column(4).is_null());
  EXPECT_EQ(echo.column(5).real(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(echo.column(6).real(), 1e-300);
  EXPECT_EQ(echo.column(7).int64(), 5);  // SUM of bigints is a numeric
  EXPECT_FALSE(echo.step());
}

TEST(PostgresqlConnection, ReadConnectionsRefuseWrites) {
  const std::string uri = test::PostgresCluster::shared().create_database();
  open_connection(uri, Access::write)->execute_script("CREATE TABLE t (x BIGINT)");
  auto reader = open_connection(uri, Access::read);
  EXPECT_THROW(reader->execute_script("INSERT INTO t VALUES (1)"), DatabaseError);
}

TEST(PostgresqlStore, RefusesADatabaseFromANewerKerntuneWithoutTouchingIt) {
  const std::string uri = test::PostgresCluster::shared().create_database();
  open_connection(uri, Access::write)
      ->execute_script(
          "CREATE TABLE kerntune_schema (version BIGINT NOT NULL);"
          "INSERT INTO kerntune_schema VALUES (999)");
  try {
    Store store(uri);
    FAIL() << "a version 999 database was opened";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("999"), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
  }
  auto db = open_connection(uri, Access::read);
  Statement tables(*db, "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'jobs'");
  ASSERT_TRUE(tables.step());
  EXPECT_EQ(tables.column(0).int64(), 0);
}

TEST(PostgresqlStore, TwoStoresOpeningAFreshDatabaseAtOnceMigrateItOnce) {
  const std::string uri = test::PostgresCluster::shared().create_database();
  std::string failure;
  std::thread other([&] {
    try {
      Store store(uri);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  Store store(uri);
  other.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(store.schema_version(), 13);
  EXPECT_GT(store.create_job({}), 0);
}

}  // namespace
}  // namespace kt::db
