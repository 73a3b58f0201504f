// The store's view of its database's health (db/store_health.cpp): the retry pacing, giving up,
// the fail-fast scope of the API's threads; and on a PostgreSQL server of the test's own that is
// stopped and started again, a store whose write waits out the outage and whose fail-fast read
// does not (db/postgresql_connection.cpp, db/rows.hpp); and the same of an SQLite file that stops
// taking writes (made immutable), where reads keep answering (db/sqlite_connection.cpp).
#include "db/store_health.hpp"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <thread>

#include "db/store.hpp"
#include "support/immutable_files.hpp"
#include "support/postgres_cluster.hpp"
#include "support/store_fixtures.hpp"

namespace kt::db {
namespace {

using namespace std::chrono_literals;

TEST(StoreHealth, BackoffDoublesFromATenthOfASecondUpToFiveSecondsWithJitter) {
  EXPECT_EQ(StoreHealth::backoff(0, 1.0), 100ms);
  EXPECT_EQ(StoreHealth::backoff(1, 1.0), 200ms);
  EXPECT_EQ(StoreHealth::backoff(2, 1.0), 400ms);
  EXPECT_EQ(StoreHealth::backoff(5, 1.0), 3200ms);
  EXPECT_EQ(StoreHealth::backoff(6, 1.0), 5000ms);
  EXPECT_EQ(StoreHealth::backoff(1000, 1.0), 5000ms);
  EXPECT_EQ(StoreHealth::backoff(0, 0.75), 75ms);
  EXPECT_EQ(StoreHealth::backoff(1000, 1.25), 6250ms);
}

TEST(StoreHealth, AnOutageIsCountedOnceHoweverManyLossesItHas) {
  StoreHealth health("postgresql");
  EXPECT_TRUE(health.snapshot().reachable);
  health.lost("server closed the connection unexpectedly");
  health.lost("connection refused");
  const StoreHealthSnapshot down = health.snapshot();
  EXPECT_FALSE(down.reachable);
  EXPECT_EQ(down.outages, 1u);
  EXPECT_EQ(down.last_error, "connection refused");
  EXPECT_EQ(down.since.size(), std::string("2026-01-01T00:00:00Z").size()) << down.since;
  health.restored();
  health.restored();
  const StoreHealthSnapshot up = health.snapshot();
  EXPECT_TRUE(up.reachable);
  EXPECT_EQ(up.outages, 1u);
  EXPECT_TRUE(up.since.empty());
  health.lost("again");
  EXPECT_EQ(health.snapshot().outages, 2u);
}

TEST(StoreHealth, GivingUpWakesAWaiterAndRefusesLaterWaits) {
  StoreHealth health("postgresql");
  auto waiter = std::async(std::launch::async, [&] { return health.wait_before_retry(1000); });
  std::this_thread::sleep_for(50ms);
  health.give_up_waiting();
  ASSERT_EQ(waiter.wait_for(2s), std::future_status::ready);
  EXPECT_FALSE(waiter.get());
  EXPECT_FALSE(health.wait_before_retry(0));
  health.wait_again();
  EXPECT_TRUE(health.wait_before_retry(0));
}

TEST(StoreHealth, FailFastHoldsForItsScopeOnItsThreadOnly) {
  EXPECT_FALSE(FailFastOnOutage::active());
  {
    const FailFastOnOutage outer;
    EXPECT_TRUE(FailFastOnOutage::active());
    std::thread([] { EXPECT_FALSE(FailFastOnOutage::active()); }).join();
    {
      const FailFastOnOutage inner;
      EXPECT_TRUE(FailFastOnOutage::active());
    }
    EXPECT_TRUE(FailFastOnOutage::active());
  }
  EXPECT_FALSE(FailFastOnOutage::active());
}

TEST(PostgresqlStoreOutage, AWriteWaitsOutTheOutageAndAFailFastReadDoesNot) {
  auto cluster = test::PostgresCluster::own();
  Store store(cluster->create_database(), 2);
  const std::int64_t first = store.create_job(test::tune_job());
  EXPECT_EQ(store.health().backend, "postgresql");
  EXPECT_TRUE(store.health().reachable);

  cluster->stop_immediately();
  {
    const FailFastOnOutage fail_fast;
    EXPECT_THROW(store.job(first), StoreUnavailable);
  }
  EXPECT_FALSE(store.health().reachable);
  EXPECT_FALSE(store.health().last_error.empty());
  // The engine's write: waits, reconnecting, and lands once the server is back.
  auto write = std::async(std::launch::async, [&] {
    store.set_job_status(first, JobStatus::running);
    return store.create_job(test::tune_job());
  });
  EXPECT_EQ(write.wait_for(1500ms), std::future_status::timeout);
  cluster->restart();
  ASSERT_EQ(write.wait_for(30s), std::future_status::ready);
  const std::int64_t second = write.get();
  EXPECT_GT(second, first);
  EXPECT_EQ(store.job(first)->status, JobStatus::running);
  EXPECT_TRUE(store.health().reachable);
  EXPECT_EQ(store.health().outages, 1u);
  // Every read connection reconnects too, without a new outage.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(store.job(second).has_value());
  EXPECT_EQ(store.health().outages, 1u);

  // A stopping daemon gives up: the waiting write throws instead of hanging.
  cluster->stop_immediately();
  auto stuck = std::async(std::launch::async, [&] { store.create_job(test::tune_job()); });
  std::this_thread::sleep_for(300ms);
  store.give_up_waiting();
  ASSERT_EQ(stuck.wait_for(10s), std::future_status::ready);
  EXPECT_THROW(stuck.get(), StoreUnavailable);
}

TEST(SqliteStoreOutage, AWriteWaitsWhileTheFileTakesNoWritesAndAFailFastOneIsRefusedAtOnce) {
  test::TempDir dir;
  if (const std::string why = test::immutable_files_unsupported(dir.path()); !why.empty())
    GTEST_SKIP() << why;
  const std::filesystem::path path = dir.path() / "kerntune.db";
  Store store(path, 2);
  const std::int64_t first = store.create_job(test::tune_job());
  EXPECT_EQ(store.health().backend, "sqlite");
  EXPECT_TRUE(store.health().reachable);

  auto frozen = std::make_optional<test::ImmutableFiles>(
      std::vector<std::filesystem::path>{path, path.string() + "-wal"});
  {
    const FailFastOnOutage fail_fast;
    EXPECT_THROW(store.create_job(test::tune_job()), StoreUnavailable);
    // Reads go on: only the writer's outage.
    ASSERT_TRUE(store.job(first).has_value());
    EXPECT_EQ(store.job(first)->status, JobStatus::queued);
  }
  EXPECT_FALSE(store.health().reachable);
  EXPECT_EQ(store.health().outages, 1u);
  EXPECT_NE(store.health().last_error.find("sqlite code"), std::string::npos)
      << store.health().last_error;

  // The engine's write: waits, retrying, and lands once the file takes writes again.
  auto write = std::async(std::launch::async, [&] {
    store.set_job_status(first, JobStatus::running);
    return store.create_job(test::tune_job());
  });
  EXPECT_EQ(write.wait_for(1500ms), std::future_status::timeout);
  // Meanwhile a fail-fast write gets the writer between the waiting write's attempts and is
  // refused, instead of queueing behind the whole outage.
  auto refused = std::async(std::launch::async, [&] {
    const FailFastOnOutage fail_fast;
    store.request_cancel(first);
  });
  const bool answered = refused.wait_for(10s) == std::future_status::ready;
  EXPECT_TRUE(answered) << "a fail-fast write waited for the outage to end";
  if (answered) {
    EXPECT_THROW(refused.get(), StoreUnavailable);
  }
  EXPECT_EQ(write.wait_for(0s), std::future_status::timeout);
  frozen.reset();
  ASSERT_EQ(write.wait_for(30s), std::future_status::ready);
  const std::int64_t second = write.get();
  EXPECT_GT(second, first);
  EXPECT_EQ(store.job(first)->status, JobStatus::running);
  EXPECT_FALSE(store.job(first)->cancel_requested);
  EXPECT_TRUE(store.health().reachable);
  EXPECT_EQ(store.health().outages, 1u);
  // Nothing the outage refused was written, nothing retried was written twice.
  JobFilter all;
  all.limit = 10;
  EXPECT_EQ(store.jobs(all).size(), 2u);
}

}  // namespace
}  // namespace kt::db
