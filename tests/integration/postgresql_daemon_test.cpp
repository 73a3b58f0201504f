// kerntuned on a PostgreSQL store (--db postgresql://...): a compile-mode job through the CLI ends
// up in PostgreSQL, a restarted daemon serves it, and a server it cannot reach stops the start
// with libpq's reason and no password.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "db/store.hpp"
#include "harness/daemon_process.hpp"
#include "support/child_process.hpp"
#include "support/postgres_cluster.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

class PostgresqlDaemonTest : public ::testing::Test {
 protected:
  harness::DaemonProcess start(const std::string& tag) {
    return harness::DaemonProcess(
        test::binary_dir() / "kerntuned", uri_, dir_.path() / ("kerntuned-" + tag + ".log"),
        {"--families", (test::source_dir() / "kernel_templates").string(), "--compile-threads", "2",
         "--work-dir", (dir_.path() / "work").string()});
  }
  std::pair<int, std::string> kerntune(const std::string& server, std::vector<std::string> args) {
    args.insert(args.begin(), {(test::binary_dir() / "kerntune").string(), "--server", server});
    const auto out = dir_.path() / "cli.out";
    const int code = test::wait_exit(test::spawn(args, out, out), 120s).value_or(-1);
    return {code, test::read_text(out)};
  }

  test::TempDir dir_;
  std::string uri_ = test::PostgresCluster::shared().create_database();
};

TEST_F(PostgresqlDaemonTest, ACompileJobIsStoredInPostgresqlAndOutlivesTheDaemon) {
  std::string job_id;
  {
    auto daemon = start("first");
    ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
    EXPECT_NE(daemon.log().find("store postgresql:///"), std::string::npos) << daemon.log();
    const auto [code, out] = kerntune(
        daemon.url(), {"submit", "gemm", "--shape", "m=96,n=80,k=40", "--dtype", "bf16", "--mode",
                       "compile", "--arch", "sm_90a", "--budget", "2", "--wait"});
    ASSERT_EQ(code, 0) << out << daemon.log();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(out, match, std::regex("job (\\d+) done"))) << out;
    job_id = match[1];
    EXPECT_EQ(daemon.signal_and_wait(SIGTERM), 0) << daemon.log();
  }
  {
    Store store(uri_);
    const auto job = store.job(std::stoll(job_id));
    ASSERT_TRUE(job);
    EXPECT_EQ(job->status, JobStatus::done);
    const auto variants = store.variants(job->id, true);
    ASSERT_FALSE(variants.empty());
    int compiled = 0;
    for (const VariantRecord& v : variants) {
      if (v.status != VariantStatus::compiled) continue;
      ++compiled;
      const auto kernel = store.find_kernel(v.kernel_key);
      ASSERT_TRUE(kernel) << v.kernel_key;
      EXPECT_GT(kernel->cubin.size(), 1000u);  // the cubin's bytes, not a text rendering
      EXPECT_GT(v.registers, 0);
    }
    EXPECT_GT(compiled, 0);
  }
  auto daemon = start("second");
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  const auto [code, out] = kerntune(daemon.url(), {"show", job_id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("job " + job_id + ": done"), std::string::npos) << out;
  EXPECT_NE(out.find("compiled"), std::string::npos) << out;
}

TEST_F(PostgresqlDaemonTest, AnUnreachableServerStopsTheStartWithTheReasonAndNoPassword) {
  const auto log = dir_.path() / "refused.log";
  const pid_t pid =
      test::spawn({(test::binary_dir() / "kerntuned").string(), "--db",
                   "postgresql://kt:s3cret@127.0.0.1:1/kerntune?connect_timeout=5", "--listen",
                   "127.0.0.1:0", "--families", (test::source_dir() / "kernel_templates").string(),
                   "--work-dir", (dir_.path() / "work").string()},
                  log, log);
  const auto code = test::wait_exit(pid, 60s);
  ASSERT_TRUE(code);
  EXPECT_NE(*code, 0);
  const std::string text = test::read_text(log);
  EXPECT_NE(text.find("cannot open kerntune database postgresql://kt:***@127.0.0.1:1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
}

}  // namespace
}  // namespace kt
