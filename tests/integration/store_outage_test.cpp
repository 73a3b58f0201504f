// PostgreSQL briefly unreachable (issue 17): a real kerntuned on a throw-away cluster of the test's
// own runs a compile-mode job; the cluster is stopped as `pg_ctl stop -m immediate` stops it, for
// a few seconds, then started again. The daemon stays up and answers /healthz (200) saying the
// store is unreachable, requests that need the database get 503 store_unavailable (an answer it
// gave before, of a remembered route, is served again from memory), the outage is
// logged once (not per retry), and after the restart the job finishes with every planned variant
// holding exactly one outcome.
//
// An SQLite file that stops taking writes mid-job (its database and WAL files made immutable, as
// `chattr +i` does: that stops root too, and reaches the descriptors the daemon opened before) is
// an outage of the same kind: the daemon stays up, /healthz says the store is not writable (its
// reads still answer), a POST gets 503 store_unavailable, the job pauses, and once the files take
// writes again it finishes, the file holding each planned variant once with its one outcome.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "client/client_error.hpp"
#include "client/kerntune_client.hpp"
#include "db/connection.hpp"
#include "harness/daemon_process.hpp"
#include "support/immutable_files.hpp"
#include "support/postgres_cluster.hpp"
#include "support/store_probes.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBudget = 12;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class PostgresqlOutageTest : public ::testing::Test {
 protected:
  std::int64_t query_int(const std::string& sql) const { return test::query_int(uri_, sql); }

  test::TempDir dir_;
  std::unique_ptr<test::PostgresCluster> cluster_ = test::PostgresCluster::own();
  std::string uri_ = cluster_->create_database();
};

TEST_F(PostgresqlOutageTest, ADaemonRidesOutAStoppedDatabaseAndFinishesTheJobAfterItsRestart) {
  harness::DaemonProcess daemon(
      test::binary_dir() / "kerntuned", uri_, dir_.path() / "kerntuned.log",
      std::vector<std::string>{"--families", (test::source_dir() / "kernel_templates").string(),
                               "--compile-threads", "1", "--compile-nice", "0", "--work-dir",
                               (dir_.path() / "work").string(), "--heartbeat-seconds", "0.5"});
  daemon.wait_healthy(60s);
  const Client client(daemon.url(), 5s);
  const nlohmann::json before = client.health();
  EXPECT_EQ(before["store"]["backend"], "postgresql");
  EXPECT_EQ(before["store"]["reachable"], true);
  EXPECT_EQ(before["store"]["outages"], 0);

  const std::int64_t job =
      client.submit_job(test::gemm_compile_job(kBudget)).at("id").get<std::int64_t>();

  // Stop the database mid-job: once a few variants have their outcome, well before the last
  // (un-niced compiles, so that other work on the machine does not starve the job).
  const auto deadline = Clock::now() + 120s;
  std::int64_t at_stop = 0;
  while (Clock::now() < deadline && (at_stop = test::gated_variants(client, job)) < 2)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(at_stop, 2) << daemon.log_tail();
  ASSERT_LT(at_stop, kBudget) << "the job ended before the outage";
  // An answer this daemon gave before the outage (a remembered route's) ...
  const nlohmann::json page_before = client.variants_page(job, false, false, "", 5);
  cluster_->stop_immediately();

  // The daemon notices (its next write or heartbeat) and says so in /healthz, from memory.
  nlohmann::json during;
  const auto notice_by = Clock::now() + 20s;
  while (Clock::now() < notice_by) {
    during = client.health();
    if (during["store"]["reachable"] == false) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(during["store"]["reachable"], false) << during.dump() << daemon.log_tail();
  EXPECT_EQ(during["status"], "ok");
  EXPECT_EQ(during["store"]["outages"], 1);
  EXPECT_FALSE(during["store"].value("since", "").empty()) << during.dump();
  EXPECT_FALSE(during["store"].value("last_error", "").empty()) << during.dump();
  // A request that needs the database is refused at once, not held for the outage.
  const auto asked = Clock::now();
  try {
    client.job(job);
    ADD_FAILURE() << "GET /v1/jobs/" << job << " answered while the database was down";
  } catch (const ClientError& error) {
    EXPECT_EQ(error.status(), 503) << error.what();
    EXPECT_EQ(error.code(), "store_unavailable") << error.what();
  }
  EXPECT_LT(Clock::now() - asked, 3s);
  // ... is still served from memory, as it was.
  EXPECT_EQ(client.variants_page(job, false, false, "", 5), page_before);
  // Down long enough for several retries (0.1, 0.2, 0.4, 0.8, 1.6 s ...), alive throughout.
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(500ms);
    ASSERT_TRUE(daemon.alive()) << daemon.log_tail();
    EXPECT_EQ(client.health()["store"]["reachable"], false);
  }
  cluster_->restart();

  // The job finishes after the restart (503 until the daemon's connections are back).
  const nlohmann::json done = test::wait_for_job_end(client, job, 180s);
  ASSERT_EQ(done.value("status", ""), "done") << done.dump() << daemon.log_tail();
  const nlohmann::json after = client.health();
  EXPECT_EQ(after["store"]["reachable"], true) << after.dump();
  EXPECT_EQ(after["store"]["outages"], 1) << after.dump();
  EXPECT_FALSE(after["store"].contains("since"));

  // Every planned variant has exactly one outcome: none pending, leased, crashed or cancelled,
  // and the counts add up to the rows.
  const std::string of_job = " FROM variants WHERE job_id = " + std::to_string(job);
  const std::int64_t rows = query_int("SELECT COUNT(*)" + of_job);
  EXPECT_GE(rows, kBudget);
  EXPECT_EQ(
      query_int("SELECT COUNT(*)" + of_job + " AND status IN ('pending', 'crashed', 'cancelled')"),
      0);
  EXPECT_EQ(query_int("SELECT COUNT(*)" + of_job + " AND lease_owner IS NOT NULL"), 0);
  EXPECT_EQ(query_int("SELECT COUNT(*)" + of_job + " AND lease_expiries > 0"), 0);
  const nlohmann::json& progress = done.at("progress");
  EXPECT_EQ(progress.value("total", std::int64_t{0}), progress.value("finished", std::int64_t{-1}));
  std::int64_t ended = 0;
  for (const auto& [status, count] : progress.at("by_status").items())
    if (status != "pruned" && status != "pending") ended += count.get<std::int64_t>();
  EXPECT_EQ(ended, rows);

  // One line when the outage began and one when it ended, however many retries between.
  const std::string log = daemon.log();
  EXPECT_EQ(occurrences(log, "store is unreachable"), 1u) << daemon.log_tail();
  EXPECT_EQ(occurrences(log, "store is reachable again"), 1u) << daemon.log_tail();
  EXPECT_EQ(occurrences(log, "job " + std::to_string(job) + ": failed"), 0u) << daemon.log_tail();
}

TEST(StoreOutage, AnSqliteFileThatStopsTakingWritesPausesTheJobUntilItTakesThemAgain) {
  test::TempDir dir;
  if (const std::string why = test::immutable_files_unsupported(dir.path()); !why.empty())
    GTEST_SKIP() << why;
  const std::filesystem::path db = dir.path() / "kerntune.db";
  harness::DaemonProcess daemon(
      test::binary_dir() / "kerntuned", db, dir.path() / "kerntuned.log",
      std::vector<std::string>{"--families", (test::source_dir() / "kernel_templates").string(),
                               "--compile-threads", "1", "--compile-nice", "0", "--work-dir",
                               (dir.path() / "work").string(), "--heartbeat-seconds", "0.5"});
  daemon.wait_healthy(60s);
  const Client client(daemon.url(), 15s);  // a refused write is timed below, not cut short
  const nlohmann::json before = client.health();
  EXPECT_EQ(before["store"]["backend"], "sqlite");
  EXPECT_EQ(before["store"]["writable"], true);
  EXPECT_EQ(before["store"]["outages"], 0);

  const std::int64_t job =
      client.submit_job(test::gemm_compile_job(kBudget)).at("id").get<std::int64_t>();
  const auto deadline = Clock::now() + 120s;
  std::int64_t at_freeze = 0;
  while (Clock::now() < deadline && (at_freeze = test::gated_variants(client, job)) < 2)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(at_freeze, 2) << daemon.log_tail();
  ASSERT_LT(at_freeze, kBudget) << "the job ended before the outage";

  // Declared after the daemon: the files take writes again before it is stopped.
  std::optional<test::ImmutableFiles> frozen;
  frozen.emplace(std::vector<std::filesystem::path>{db, db.string() + "-wal"});

  // The daemon notices at its next write (an outcome, a heartbeat) and says so, from memory.
  nlohmann::json during;
  const auto notice_by = Clock::now() + 20s;
  while (Clock::now() < notice_by && daemon.alive()) {
    during = client.health();
    if (during["store"]["writable"] == false) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(daemon.alive()) << daemon.log_tail();
  ASSERT_EQ(during["store"]["writable"], false) << during.dump() << daemon.log_tail();
  EXPECT_EQ(during["status"], "ok");
  EXPECT_EQ(during["store"]["reachable"], true) << "its reads still answer";
  EXPECT_EQ(during["store"]["outages"], 1);
  EXPECT_FALSE(during["store"].value("since", "").empty()) << during.dump();
  EXPECT_NE(during["store"].value("last_error", "").find("sqlite code"), std::string::npos)
      << during.dump();

  // A write is refused at once, and creates nothing.
  const auto asked = Clock::now();
  try {
    client.submit_job(test::gemm_compile_job(kBudget));
    ADD_FAILURE() << "POST /v1/jobs answered while the file took no writes";
  } catch (const ClientError& error) {
    EXPECT_EQ(error.status(), 503) << error.what();
    EXPECT_EQ(error.code(), "store_unavailable") << error.what();
  }
  // Within a retry pause of the engine's waiting writes (at most 5 s, with jitter).
  EXPECT_LT(Clock::now() - asked, 8s);
  // Reads are served from the file, and the job stands still.
  const std::int64_t paused_at = test::gated_variants(client, job);
  EXPECT_GE(paused_at, at_freeze);
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(500ms);
    ASSERT_TRUE(daemon.alive()) << daemon.log_tail();
    EXPECT_EQ(client.health()["store"]["writable"], false);
  }
  EXPECT_EQ(test::gated_variants(client, job), paused_at) << "a write got through the outage";
  EXPECT_EQ(client.job(job).value("status", ""), "running");

  frozen.reset();
  const nlohmann::json done = test::wait_for_job_end(client, job, 180s);
  ASSERT_EQ(done.value("status", ""), "done") << done.dump() << daemon.log_tail();
  const nlohmann::json after = client.health();
  EXPECT_EQ(after["store"]["writable"], true) << after.dump();
  EXPECT_EQ(after["store"]["outages"], 1) << after.dump();
  EXPECT_FALSE(after["store"].contains("since"));
  EXPECT_EQ(daemon.stop(20s), "exited with status 0") << daemon.log_tail();

  const std::string log = daemon.log();
  EXPECT_EQ(occurrences(log, "sqlite store takes no writes"), 1u) << daemon.log_tail();
  EXPECT_EQ(occurrences(log, "sqlite store takes writes again"), 1u) << daemon.log_tail();
  EXPECT_EQ(occurrences(log, "job " + std::to_string(job) + ": failed"), 0u) << daemon.log_tail();

  // The file itself: one job (the refused POST made none), every planned variant once with its
  // outcome, the kept counts matching the rows, no lease left, every compiled kernel cached.
  SQLite::Database sql(db.string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(sql.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM jobs").getInt64(), 1);
  const std::string of_job = " FROM variants WHERE job_id = " + std::to_string(job);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*)" + of_job +
                           " AND status IN ('compiled', 'compile_error', 'resource_exceeded')")
                .getInt64(),
            kBudget);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*)" + of_job +
                           " AND status IN ('pending', 'crashed', 'cancelled')")
                .getInt64(),
            0);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*)" + of_job + " AND lease_owner IS NOT NULL").getInt64(),
            0);
  EXPECT_EQ(
      sql.execAndGet("SELECT COUNT(*)" + of_job +
                     " AND status = 'compiled' AND kernel_key NOT IN (SELECT key FROM kernels)")
          .getInt64(),
      0);
  SQLite::Statement miscounted(
      sql,
      "SELECT c.status FROM job_counts c WHERE c.job_id = ? AND c.count <>"
      " (SELECT COUNT(*) FROM variants v WHERE v.job_id = c.job_id AND v.status = c.status)");
  miscounted.bind(1, static_cast<std::int64_t>(job));
  while (miscounted.executeStep())
    ADD_FAILURE() << "status " << miscounted.getColumn(0).getString() << " miscounted";
  const nlohmann::json& progress = done.at("progress");
  EXPECT_EQ(progress.value("total", std::int64_t{0}), progress.value("finished", std::int64_t{-1}));
}

}  // namespace
}  // namespace kt
