// A fleet on one machine (issue 17): two real kerntuned processes on one throw-away PostgreSQL
// database share a compile-mode job submitted to one of them; that one is killed with kill -9
// halfway, and the other finishes the job after the dead daemon's leases expire (short leases
// from the command line). Every planned variant ends with exactly one outcome, and the history
// (GET /v1/jobs/{id}, /v1/jobs/{id}/variants) reads the same from any daemon on the database.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "client/kerntune_client.hpp"
#include "db/connection.hpp"
#include "harness/daemon_process.hpp"
#include "support/postgres_cluster.hpp"
#include "support/store_probes.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBudget = 24;

class PostgresqlFleetTest : public ::testing::Test {
 protected:
  std::unique_ptr<harness::DaemonProcess> start(const std::string& tag) {
    return std::make_unique<harness::DaemonProcess>(
        test::binary_dir() / "kerntuned", uri_, dir_.path() / ("kerntuned-" + tag + ".log"),
        std::vector<std::string>{"--families", (test::source_dir() / "kernel_templates").string(),
                                 "--compile-threads", "1", "--work-dir",
                                 (dir_.path() / ("work-" + tag)).string(), "--lease-seconds", "2",
                                 "--heartbeat-seconds", "0.4"});
  }

  std::int64_t submit(const Client& client, const JobSpec& spec = test::gemm_compile_job(kBudget)) {
    return client.submit_job(spec).at("id").get<std::int64_t>();
  }

  std::int64_t query_int(const std::string& sql) const { return test::query_int(uri_, sql); }

  test::TempDir dir_;
  std::string uri_ = test::PostgresCluster::shared().create_database();
};

TEST_F(PostgresqlFleetTest, TwoDaemonsShareACompileJobAndTheSurvivorFinishesItAfterAKillNine) {
  auto first = start("first");
  auto second = start("second");
  first->wait_healthy(60s);
  second->wait_healthy(60s);
  const Client via_first(first->url());
  const Client via_second(second->url());
  const std::int64_t job = submit(via_first);

  // The second daemon takes up the job the first one queued (its heartbeat looks for jobs).
  ASSERT_TRUE(second->wait_for_log("job " + std::to_string(job) + ": unfinished, queued by", 30s))
      << second->log_tail();
  // Kill the first halfway: once a third of the variants have their outcome.
  const auto deadline = Clock::now() + 60s;
  std::int64_t at_kill = 0;
  while (Clock::now() < deadline) {
    at_kill = test::gated_variants(via_second, job);
    if (at_kill >= kBudget / 3) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GE(at_kill, kBudget / 3) << first->log_tail() << second->log_tail();
  ASSERT_LT(at_kill, kBudget) << "the job ended before the kill: nothing was left to take over";
  // ... and while it holds leases (it claims its next batch as soon as one is compiled).
  const std::string held_by_first =
      "SELECT COUNT(*) FROM variants v JOIN daemons d ON d.id = v.lease_owner"
      " WHERE d.pid = " +
      std::to_string(first->pid()) + " AND v.status = 'pending'";
  while (Clock::now() < deadline && query_int(held_by_first) == 0)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(first->kill_now());

  // The survivor finishes it: the dead daemon's leases expire (2 s) and are claimed again.
  const nlohmann::json done = test::wait_for_job_end(via_second, job, 90s);
  ASSERT_EQ(done.value("status", ""), "done") << done.dump() << second->log_tail();

  // Every planned variant has exactly one outcome: none pending, none leased, none faulted (one
  // expiry each at most), and the counts add up to the rows.
  const std::int64_t rows =
      query_int("SELECT COUNT(*) FROM variants WHERE job_id = " + std::to_string(job));
  EXPECT_GE(rows, kBudget);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE job_id = " + std::to_string(job) +
                      " AND status IN ('pending', 'crashed', 'cancelled')"),
            0);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE lease_owner IS NOT NULL"), 0);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE lease_expiries > 1"), 0);
  // What the killed daemon held came back through an expiry (in the lease history) and was
  // finished by the survivor. Only the variants whose work it had begun count an expiry: with one
  // compile thread, the one compiling and at most one compiled awaiting its outcome.
  EXPECT_GE(query_int("SELECT COUNT(*) FROM variants WHERE lease_history <> ''"), 1);
  EXPECT_LE(query_int("SELECT COUNT(*) FROM variants WHERE lease_expiries = 1"), 2);
  const nlohmann::json& progress = done.at("progress");
  EXPECT_EQ(progress.value("total", std::int64_t{0}), progress.value("finished", std::int64_t{-1}));
  std::int64_t ended = 0;  // rows with an outcome: all statuses but pending (pruned are counts)
  for (const auto& [status, count] : progress.at("by_status").items())
    if (status != "pruned" && status != "pending") ended += count.get<std::int64_t>();
  EXPECT_EQ(ended, rows);

  // The history is the same from any daemon on the database: the survivor and a fresh one.
  auto third = start("third");
  third->wait_healthy(60s);
  const Client via_third(third->url());
  EXPECT_EQ(via_second.job(job), via_third.job(job));
  EXPECT_EQ(via_second.variants(job), via_third.variants(job));
  EXPECT_EQ(via_third.variants(job).at("variants").size(), static_cast<std::size_t>(rows));
}

// The compile cache is the store's, keyed by content: a daemon that runs the variants another one
// compiled fetches every kernel (with its resource report) from the store and compiles none,
// though its own work folder is empty.
TEST_F(PostgresqlFleetTest, ASecondDaemonFetchesEveryKernelFromTheStoreInsteadOfCompiling) {
  auto first = start("first");
  first->wait_healthy(60s);
  const Client via_first(first->url());
  const std::int64_t job_a = submit(via_first);
  const nlohmann::json done_a = test::wait_for_job_end(via_first, job_a, 180s);
  ASSERT_EQ(done_a.value("status", ""), "done") << done_a.dump() << first->log_tail();
  const nlohmann::json variants_a = via_first.variants(job_a).at("variants");
  const std::string metrics_a = test::scrape_metrics(first->url());
  first->stop();  // cleanly: the second daemon runs alone, with a work folder of its own

  // The first daemon's kernels by template and config, and the same configs as a pinned job.
  std::map<std::string, nlohmann::json> kernels_of_a;
  nlohmann::json configs = nlohmann::json::array();
  for (const nlohmann::json& v : variants_a) {
    if (!v.value("has_kernel", false)) continue;
    nlohmann::json config = v.at("config");
    config["template"] = v.at("template");
    configs.push_back(config);
    kernels_of_a[v.at("template").get<std::string>() + " " +
                 v.at("config_key").get<std::string>()] = v;
  }
  ASSERT_GE(kernels_of_a.size(), 4u) << variants_a.dump();
  // A fresh database: the first daemon compiled them with NVRTC (a hit only where two configs
  // compile to the same kernel text).
  EXPECT_GE(test::metric_value(metrics_a, "kerntune_compile_seconds_count"), 1);
  EXPECT_EQ(test::metric_value(metrics_a, "kerntune_compile_seconds_count") +
                test::metric_value(metrics_a, "kerntune_compile_cache_hits_total"),
            static_cast<double>(kernels_of_a.size()));

  auto second = start("second");
  second->wait_healthy(60s);
  const Client via_second(second->url());
  JobSpec spec = test::gemm_compile_job(0);
  spec.configs = configs;
  const std::int64_t job_b = submit(via_second, spec);
  const nlohmann::json done_b = test::wait_for_job_end(via_second, job_b, 180s);
  ASSERT_EQ(done_b.value("status", ""), "done") << done_b.dump() << second->log_tail();

  // Every kernel came from the store, none from NVRTC.
  const std::string metrics_b = test::scrape_metrics(second->url());
  EXPECT_EQ(test::metric_value(metrics_b, "kerntune_compile_cache_hits_total"),
            static_cast<double>(kernels_of_a.size()));
  EXPECT_EQ(test::metric_value(metrics_b, "kerntune_compile_seconds_count"), 0);
  // Each variant has the first daemon's kernel, outcome and resource report (a fetched kernel
  // must not report 0 registers), and no NVRTC time of its own.
  const nlohmann::json variants_b = via_second.variants(job_b).at("variants");
  std::size_t matched = 0;
  for (const nlohmann::json& v : variants_b) {
    const std::string name =
        v.at("template").get<std::string>() + " " + v.at("config_key").get<std::string>();
    const auto a = kernels_of_a.find(name);
    ASSERT_NE(a, kernels_of_a.end()) << "the second job ran a variant the first did not: " << name;
    ++matched;
    EXPECT_EQ(v.at("kernel_key"), a->second.at("kernel_key")) << name;
    EXPECT_EQ(v.at("status"), a->second.at("status")) << name;
    ASSERT_TRUE(v.at("registers").is_number()) << v.dump();
    EXPECT_GT(v.at("registers").get<int>(), 0) << name;
    for (const char* resource : {"registers", "spill_bytes", "smem_bytes", "threads"})
      EXPECT_EQ(v.at(resource), a->second.at(resource)) << name << ": " << resource;
    EXPECT_EQ(v.at("compile_ms").get<double>(), 0.0) << name;
  }
  EXPECT_EQ(matched, kernels_of_a.size());
}

}  // namespace
}  // namespace kt
