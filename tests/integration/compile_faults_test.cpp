// A compiler crash is the variant's outcome, not the daemon's end: the real kerntuned runs a
// compile-mode job of four pinned GEMM configs while its compile processes are told (test hook
// KERNTUNE_TEST_COMPILE_FAULT, inherited from the test) to die of SIGSEGV on one of them. The
// job ends done, that variant is recorded crashed at gate compile with the signal in its reason,
// the other three compiled, the daemon answers /healthz, and a second job compiles again on the
// daemon's one compile thread (whose process was replaced). And a daemon killed with kill -9
// leaves no compile process behind, even one stuck in its compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/http_transport.hpp"
#include "client/kerntune_client.hpp"
#include "harness/daemon_process.hpp"
#include "support/gemm_templates.hpp"
#include "support/process_table.hpp"
#include "support/scoped_env.hpp"
#include "support/store_probes.hpp"
#include "support/test_paths.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

constexpr const char* kTemplate = "mma_multistage_cluster";

nlohmann::json wait_for_end(const Client& client, std::int64_t job_id) {
  const auto deadline = Clock::now() + 180s;
  nlohmann::json job;
  while (Clock::now() < deadline) {
    job = client.job(job_id);
    const std::string status = job.value("status", "");
    if (status == "done" || status == "failed" || status == "cancelled") break;
    std::this_thread::sleep_for(100ms);
  }
  return job;
}

TEST(CompileFaults, ACompileProcessKilledBySigsegvFailsOneVariantAndTheDaemonServesOn) {
  const Shape shape = test::gemm_shape(256, 256, 256);
  const DeviceLimits limits = test::gemm_limits("sm_90a");
  const auto plans = test::gemm_survivors(kTemplate, shape, limits);
  ASSERT_GE(plans.size(), 4u);
  // The victim (plans[0]) is told apart by a define that the three other configs lack.
  const auto options_of = [&](const VariantPlan& plan) {
    return compile_request(test::gemm_family(), *plan.tmpl, plan.config, "bf16", limits).options;
  };
  std::string marker;
  std::vector<const VariantPlan*> chosen{&plans[0]};
  for (const std::string& option : options_of(plans[0])) {
    chosen.resize(1);
    for (std::size_t i = 1; i < plans.size() && chosen.size() < 4; ++i) {
      const auto other = options_of(plans[i]);
      if (std::find(other.begin(), other.end(), option) == other.end()) chosen.push_back(&plans[i]);
    }
    if (chosen.size() == 4) {
      marker = option;
      break;
    }
  }
  ASSERT_FALSE(marker.empty()) << "no define sets the first config apart from three others";

  test::TempDir dir;
  test::ScopedEnv fault("KERNTUNE_TEST_COMPILE_FAULT", "segv:" + marker);
  harness::DaemonProcess daemon(
      test::binary_dir() / "kerntuned", dir.path() / "kerntune.db", dir.path() / "daemon.log",
      {"--families", (test::source_dir() / "kernel_templates").string(), "--compile-threads", "1"});
  daemon.wait_healthy(120s);
  Client client(daemon.url());

  JobSpec spec;
  spec.family = "gemm";
  spec.shape = {shape.begin(), shape.end()};
  spec.dtype = "bf16";
  spec.mode = "compile";
  spec.arch = "sm_90a";
  spec.configs = nlohmann::json::array();
  for (std::size_t i = 0; i < 4; ++i) {
    nlohmann::json config = to_json(chosen[i]->config);
    config["template"] = kTemplate;
    spec.configs.push_back(config);
  }
  const std::int64_t job_id = client.submit_job(spec).at("id").get<std::int64_t>();
  const nlohmann::json job = wait_for_end(client, job_id);
  ASSERT_EQ(job.value("status", ""), "done") << job.dump(2) << daemon.log_tail();

  std::map<std::string, nlohmann::json> by_key;
  const nlohmann::json variants = client.variants(job_id);
  for (const nlohmann::json& variant : variants.at("variants"))
    by_key[variant.at("config_key").get<std::string>()] = variant;
  ASSERT_EQ(by_key.size(), 4u) << variants.dump(1);
  const nlohmann::json& victim = by_key.at(canonical_key(chosen[0]->config));
  EXPECT_EQ(victim.value("status", ""), "crashed") << victim.dump(2);
  EXPECT_EQ(victim.value("failed_gate", ""), "compile") << victim.dump(2);
  const std::string reason = victim.value("reason", "");
  EXPECT_NE(reason.find("the NVRTC process died while compiling"), std::string::npos) << reason;
  EXPECT_NE(reason.find("signal 11"), std::string::npos) << reason;
  for (std::size_t i = 1; i < 4; ++i) {
    const nlohmann::json& other = by_key.at(canonical_key(chosen[i]->config));
    EXPECT_EQ(other.value("status", ""), "compiled") << other.dump(2);
    EXPECT_GT(other.value("registers", 0), 0) << other.dump(2);
  }

  EXPECT_TRUE(daemon.alive()) << daemon.log_tail();
  EXPECT_EQ(client.health().value("status", ""), "ok") << client.health().dump(2);
  const std::string metrics =
      HttpTransport(parse_server_url(daemon.url()), 10s, "").send(http::verb::get, "/metrics").body;
  EXPECT_NE(metrics.find("\nkerntune_compile_process_restarts_total 1\n"), std::string::npos)
      << metrics;

  // The one compile thread's process was replaced: the other configs compile afresh for fp16.
  spec.configs.erase(spec.configs.begin());
  spec.dtype = "fp16";
  const std::int64_t second_id = client.submit_job(spec).at("id").get<std::int64_t>();
  const nlohmann::json second = wait_for_end(client, second_id);
  ASSERT_EQ(second.value("status", ""), "done") << second.dump(2) << daemon.log_tail();
  const nlohmann::json second_variants = client.variants(second_id);
  ASSERT_EQ(second_variants.at("variants").size(), 3u) << second_variants.dump(1);
  for (const nlohmann::json& variant : second_variants.at("variants"))
    EXPECT_EQ(variant.value("status", ""), "compiled") << variant.dump(2);
  EXPECT_TRUE(daemon.alive()) << daemon.log_tail();
}

// A daemon killed with kill -9 while its compile process is stuck in NVRTC (the hook makes every
// compile hang) leaves no compile process behind: the kernel ends it with the daemon.
TEST(CompileFaults, ACompileProcessDoesNotOutliveADaemonKilledMidCompile) {
  test::TempDir dir;
  test::ScopedEnv fault("KERNTUNE_TEST_COMPILE_FAULT", "hang:-DKT_DTYPE_BF16");
  harness::DaemonProcess daemon(
      test::binary_dir() / "kerntuned", dir.path() / "kerntune.db", dir.path() / "daemon.log",
      {"--families", (test::source_dir() / "kernel_templates").string(), "--compile-threads", "2"});
  daemon.wait_healthy(120s);
  const JobSpec spec = test::gemm_compile_job(4);
  Client(daemon.url()).submit_job(spec);
  std::vector<pid_t> compilers;
  for (const auto deadline = Clock::now() + 120s; compilers.empty() && Clock::now() < deadline;) {
    std::this_thread::sleep_for(50ms);
    compilers = test::children_with_argument(daemon.pid(), "--compile");
  }
  ASSERT_FALSE(compilers.empty()) << daemon.log_tail();
  std::this_thread::sleep_for(300ms);  // into its (endless) compile
  ASSERT_TRUE(daemon.kill_now());
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline &&
         std::any_of(compilers.begin(), compilers.end(), test::process_running))
    std::this_thread::sleep_for(50ms);
  for (const pid_t pid : compilers)
    EXPECT_FALSE(test::process_running(pid)) << "compile process " << pid;
}

}  // namespace
}  // namespace kt
