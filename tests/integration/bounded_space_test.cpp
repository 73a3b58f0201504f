// Uploaded families with large spaces against a real daemon on loopback (--allow-user-families,
// real SQLite, real NVRTC for the registration's compile): a template above the cap is refused
// with its product named and changes nothing; a large but allowed space registers in bounded
// memory with its exact space_size; a compile job planning millions of configurations, none
// admitted, lets a job submitted after it start, ends within a second or two of its DELETE, and
// SIGTERM stops the daemon within its bound, the job left to resume.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "client/http_transport.hpp"
#include "db/store.hpp"
#include "harness/daemon_process.hpp"
#include "support/in_process_daemon.hpp"
#include "support/test_paths.hpp"
#include "tuner/space_size.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A template of the worked example's kernel over `counts` axes of 0..count-1 (macros the kernel
// ignores), for `arch`, whose last constraint no config meets: `passing` constraints before it
// make each configuration cost what a real manifest's handful of checks would.
nlohmann::ordered_json unsatisfiable_template(const std::string& name, const std::string& arch,
                                              const std::vector<int>& counts, int passing) {
  nlohmann::ordered_json tmpl;
  tmpl["name"] = name;
  tmpl["source"] = "wmma_gemm.cuh";
  tmpl["kernel"] = "wmma_gemm";
  tmpl["archs"] = {arch};
  for (std::size_t a = 0; a < counts.size(); ++a) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (int v = 0; v < counts[a]; ++v) values.push_back(v);
    tmpl["axes"]["X" + std::to_string(a)] = {{"values", values}};
  }
  nlohmann::ordered_json constraints = nlohmann::ordered_json::array();
  for (int c = 0; c < passing; ++c)
    constraints.push_back("X" + std::to_string(c % counts.size()) + " >= 0");
  constraints.push_back("X0 < 0");
  tmpl["constraints"] = constraints;
  tmpl["launch"] = {{"grid", {"1", "1", "1"}}, {"block", {"32", "1", "1"}}, {"dynamic_smem", "0"}};
  return tmpl;
}

// The worked example (kernel_templates/examples/wmma_gemm) as family "bounded", its own template
// first (what the registration compiles, for sm_80), then `more`.
nlohmann::ordered_json upload_with(const std::vector<nlohmann::ordered_json>& more) {
  const auto dir = test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm";
  nlohmann::ordered_json body;
  body["manifest"] = nlohmann::ordered_json::parse(file_text(dir / "manifest.json"));
  body["manifest"]["name"] = "bounded";
  for (const auto& tmpl : more) body["manifest"]["templates"].push_back(tmpl);
  body["sources"]["wmma_gemm.cuh"] = file_text(dir / "wmma_gemm.cuh");
  body["sources"]["wmma_gemm_reference.cuh"] = file_text(dir / "wmma_gemm_reference.cuh");
  return body;
}

// "wide": 2,000,000 configurations for sm_80, the arch the registration probes (a daemon that
// enumerated them in memory took about 1 GB); "huge": 9,000,000 for sm_90a, what the compile
// jobs below plan (seconds at the least on any machine, longer than the test waits for).
nlohmann::ordered_json large_upload() {
  return upload_with({unsatisfiable_template("wide", "sm_80", {10, 10, 10, 10, 10, 10, 2}, 0),
                      unsatisfiable_template("huge", "sm_90a", {10, 10, 10, 10, 10, 10, 9}, 48)});
}

std::string planning_job(int m) {
  return R"({"family":"bounded","shape":{"M":)" + std::to_string(m) +
         R"(,"N":128,"K":64},"dtype":"fp16","mode":"compile","arch":"sm_90a"})";
}

// The example's own template alone on sm_86 (wide and huge are not written for it).
const std::string kSmallJob =
    R"({"family":"bounded","shape":{"M":128,"N":128,"K":64},"dtype":"fp16","mode":"compile",
        "arch":"sm_86","budget":2})";

class Api {
 public:
  explicit Api(const std::string& url) : transport_(parse_server_url(url), 60s, "") {}
  HttpReply send(http::verb method, const std::string& target, const std::string& body = "") {
    return transport_.send(method, target, body);
  }
  nlohmann::json get(const std::string& target) {
    const HttpReply reply = send(http::verb::get, target);
    EXPECT_EQ(reply.status, 200) << target << ": " << reply.body;
    return nlohmann::json::parse(reply.body);
  }
  std::string submit(const std::string& body) {
    const HttpReply created = send(http::verb::post, "/v1/jobs", body);
    EXPECT_EQ(created.status, 202) << created.body;
    return nlohmann::json::parse(created.body)["id"].dump();
  }
  nlohmann::json job(const std::string& id) { return get("/v1/jobs/" + id); }
  // Polls until `done` holds for the job; the last state either way.
  nlohmann::json job_until(const std::string& id,
                           const std::function<bool(const nlohmann::json&)>& done,
                           std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    nlohmann::json state = job(id);
    while (!done(state) && Clock::now() < until) {
      std::this_thread::sleep_for(50ms);
      state = job(id);
    }
    return state;
  }
  nlohmann::json template_of(const std::string& family, const std::string& name) {
    const nlohmann::json listed = get("/v1/families");  // kept: the loop reads into it
    for (const auto& f : listed["families"])
      if (f["name"] == family)
        for (const auto& t : f["templates"])
          if (t["name"] == name) return t;
    return nullptr;
  }

 private:
  HttpTransport transport_;
};

std::int64_t total_of(const nlohmann::json& job) {
  return job.contains("progress") ? job["progress"].value("total", std::int64_t{0}) : 0;
}

bool is_running_unplanned(const nlohmann::json& job) {
  return job["status"] == "running" && total_of(job) == 0;
}

// The daemon's resident memory in MB, from /proc/<pid>/status (0 if it cannot be read).
std::int64_t rss_mb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) / 1024;
  return 0;
}

constexpr std::int64_t kRssLimitMb = 300;

class BoundedSpaceTest : public ::testing::Test {
 protected:
  // A kerntuned of its own, registered "bounded" (registration polled while watching its
  // memory). Returns the highest RSS seen while the registration was compiling.
  std::int64_t start_and_register(std::optional<harness::DaemonProcess>& daemon,
                                  const std::string& log) {
    daemon.emplace(
        test::binary_dir() / "kerntuned", db_, dir_.path() / log,
        std::vector<std::string>{"--allow-user-families", "--compile-threads", "2", "--families",
                                 (test::source_dir() / "kernel_templates").string()});
    daemon->wait_healthy(60s);
    Api api(daemon->url());
    const HttpReply accepted = api.send(http::verb::post, "/v1/families", large_upload().dump());
    EXPECT_EQ(accepted.status, 202) << accepted.body;
    if (accepted.status != 202) return 0;
    const std::string id = nlohmann::json::parse(accepted.body)["id"];
    std::int64_t peak = 0;
    nlohmann::json state;
    for (int i = 0; i < 2400; ++i) {
      peak = std::max(peak, rss_mb(daemon->pid()));
      state = api.get("/v1/families/registrations/" + id);
      if (state["status"] != "compiling") break;
      std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(state["status"], "registered") << state.dump(2) << daemon->log_tail();
    return peak;
  }

  test::TempDir dir_;
  std::filesystem::path db_ = dir_.path() / "kerntune.db";
};

TEST(BoundedSpace, ATemplateAboveTheCapIsRefusedNamingItsProductAndChangesNothing) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  // Ten axes of 100 values: 10^20 configurations, beyond 64 bits.
  const HttpReply refused = api.send(
      http::verb::post, "/v1/families",
      upload_with({unsatisfiable_template("x", "sm_90a", std::vector<int>(10, 100), 0)}).dump());
  EXPECT_EQ(refused.status, 422) << refused.body;
  const std::string message = nlohmann::json::parse(refused.body)["error"]["message"];
  EXPECT_NE(message.find("template 'x' has 10^20 configs (100^10); at most 10,000,000 per "
                         "template"),
            std::string::npos)
      << message;
  // Just over the cap: the exact product.
  const HttpReply over = api.send(
      http::verb::post, "/v1/families",
      upload_with({unsatisfiable_template("y", "sm_80", {10, 10, 10, 10, 10, 10, 10, 2}, 0)})
          .dump());
  EXPECT_EQ(over.status, 422) << over.body;
  EXPECT_NE(over.body.find("template 'y' has 20,000,000 configs (10^7 x 2)"), std::string::npos)
      << over.body;

  EXPECT_TRUE(daemon.store.registered_families().empty());
  EXPECT_TRUE(api.template_of("bounded", "x").is_null());
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(daemon.registrar->root() / ".staging", ec) ||
              !std::filesystem::exists(daemon.registrar->root() / ".staging"));
}

TEST_F(BoundedSpaceTest, PlanningMillionsInBoundedMemoryLetsTheNextJobStartAndEndsOnDelete) {
  std::optional<harness::DaemonProcess> daemon;
  const std::int64_t registering_mb = start_and_register(daemon, "daemon.log");
  EXPECT_GT(registering_mb, 0);
  EXPECT_LT(registering_mb, kRssLimitMb) << "RSS while the registration probed 2,000,000 configs";
  Api api(daemon->url());
  EXPECT_EQ(api.template_of("bounded", "wide")["space_size"], 2'000'000);
  EXPECT_EQ(api.template_of("bounded", "huge")["space_size"], 9'000'000);

  const std::string planning = api.submit(planning_job(128));
  EXPECT_TRUE(is_running_unplanned(api.job_until(planning, is_running_unplanned, 30s)))
      << daemon->log_tail();

  // Submitted after it, the small job is planned and runs while the first still plans.
  const std::string small = api.submit(kSmallJob);
  const nlohmann::json started = api.job_until(
      small, [](const nlohmann::json& j) { return total_of(j) > 0; }, 30s);
  EXPECT_GT(total_of(started), 0) << started.dump(2) << daemon->log_tail();
  EXPECT_NE(started["status"], "queued");
  EXPECT_TRUE(is_running_unplanned(api.job(planning))) << "planning ended before the check";

  std::int64_t planning_mb = 0;
  for (int i = 0; i < 10; ++i) {
    planning_mb = std::max(planning_mb, rss_mb(daemon->pid()));
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_LT(planning_mb, kRssLimitMb) << "RSS while planning 9,000,000 configs";

  ASSERT_TRUE(is_running_unplanned(api.job(planning))) << "planning ended before the DELETE";
  const auto asked = Clock::now();
  const HttpReply cancel = api.send(http::verb::delete_, "/v1/jobs/" + planning);
  EXPECT_EQ(cancel.status, 200) << cancel.body;
  const nlohmann::json ended = api.job_until(
      planning, [](const nlohmann::json& j) { return j["status"] == "cancelled"; }, 10s);
  const auto took = Clock::now() - asked;
  EXPECT_EQ(ended["status"], "cancelled") << ended.dump(2) << daemon->log_tail();
  EXPECT_LT(took, 2s);
  EXPECT_EQ(total_of(ended), 0);

  const nlohmann::json small_done = api.job_until(
      small, [](const nlohmann::json& j) { return j["status"] == "done"; }, 120s);
  EXPECT_EQ(small_done["status"], "done") << small_done.dump(2) << daemon->log_tail();
}

TEST_F(BoundedSpaceTest, SigtermWhilePlanningStopsTheDaemonWithinItsBoundAndTheJobResumes) {
  std::optional<harness::DaemonProcess> daemon;
  start_and_register(daemon, "first.log");
  std::string planning;
  {
    Api api(daemon->url());
    planning = api.submit(planning_job(256));
    ASSERT_TRUE(is_running_unplanned(api.job_until(planning, is_running_unplanned, 30s)))
        << daemon->log_tail();
  }
  const auto signalled = Clock::now();
  ASSERT_EQ(::kill(daemon->pid(), SIGTERM), 0);
  const std::optional<int> code = daemon->exit_code_within(15s);
  const auto took = Clock::now() - signalled;
  ASSERT_TRUE(code) << "still running 15 s after SIGTERM: " << daemon->log_tail();
  EXPECT_EQ(*code, 0) << daemon->log_tail();
  EXPECT_LT(took, 10s);
  EXPECT_TRUE(daemon->wait_for_log("paused for shutdown", 1s)) << daemon->log_tail();
  daemon.reset();

  {  // The store as the stop left it: the job unfinished, nothing of its plan stored.
    Store left(db_);
    const auto job = left.job(std::stoll(planning));
    ASSERT_TRUE(job);
    EXPECT_EQ(job->status, JobStatus::running);
    EXPECT_EQ(left.progress(job->id).total, 0);
    EXPECT_EQ(left.registered_families().size(), 1u);
  }
  // The next daemon takes it up again, planning, and a DELETE ends it there too.
  daemon.emplace(
      test::binary_dir() / "kerntuned", db_, dir_.path() / "second.log",
      std::vector<std::string>{"--allow-user-families", "--compile-threads", "2", "--families",
                               (test::source_dir() / "kernel_templates").string()});
  daemon->wait_healthy(60s);
  Api api(daemon->url());
  EXPECT_TRUE(daemon->wait_for_log("resuming 1 unfinished job", 10s)) << daemon->log_tail();
  EXPECT_TRUE(is_running_unplanned(api.job(planning)));
  EXPECT_EQ(api.send(http::verb::delete_, "/v1/jobs/" + planning).status, 200);
  EXPECT_EQ(api.job_until(
                planning, [](const nlohmann::json& j) { return j["status"] == "cancelled"; },
                5s)["status"],
            "cancelled");
}

}  // namespace
}  // namespace kt
