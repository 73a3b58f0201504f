// The real binaries: kerntuned started as a child process on a free port with a temp database,
// and the kerntune CLI run against it as a user would. Checks exit codes and what is printed, and
// that a restarted daemon still knows the jobs of the previous one.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "client/kerntune_client.hpp"
#include "db/store.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

extern char** environ;

namespace kt {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

unsigned short free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

// Starts a program with stdout and stderr sent to files; returns its pid.
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& out,
            const std::filesystem::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Exit code, or 128 + signal for a killed process.
int wait_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

class Daemon {
 public:
  Daemon(const std::filesystem::path& dir, const std::filesystem::path& db, const std::string& tag)
      : port_(free_port()), log_(dir / ("kerntuned-" + tag + ".log")) {
    pid_ = spawn({(test::binary_dir() / "kerntuned").string(), "--listen",
                  "127.0.0.1:" + std::to_string(port_), "--db", db.string(), "--families",
                  (test::source_dir() / "kernel_templates").string(), "--compile-threads", "2"},
                 log_, log_.string() + ".err");
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      wait_exit(pid_);
    }
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return read_file(log_) + read_file(log_.string() + ".err"); }

  // True once /healthz answers; false if the daemon exited or the time ran out.
  bool wait_healthy(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      try {
        if (Client(url(), 2s).health()["status"] == "ok") return true;
      } catch (const ClientError&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

  // Sends the signal and returns the exit code (128 + signal if it did not handle it).
  int stop(int signal) {
    kill(pid_, signal);
    const int code = wait_exit(pid_);
    pid_ = -1;
    return code;
  }

 private:
  unsigned short port_;
  std::filesystem::path log_;
  pid_t pid_ = -1;
};

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

class CliTest : public ::testing::Test {
 protected:
  CliRun kerntune(const std::string& server, std::vector<std::string> args) {
    args.insert(args.begin(), {(test::binary_dir() / "kerntune").string(), "--server", server});
    const auto out = dir_.path() / "cli.out";
    const auto err = dir_.path() / "cli.err";
    CliRun run;
    run.exit_code = wait_exit(spawn(args, out, err));
    run.out = read_file(out);
    run.err = read_file(err);
    return run;
  }

  test::TempDir dir_;
  std::filesystem::path db_ = dir_.path() / "kerntune.db";
};

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not in:\n" << text;
}

// The daemon answers in pages of at most 1000 (100 by default); `kerntune show` and the client
// follow `next`, so a job larger than a page is still shown whole.
TEST_F(CliTest, ShowListsEveryVariantOfAJobLargerThanAPage) {
  std::int64_t job_id = 0;
  std::vector<std::int64_t> variant_ids;
  {
    Store store(db_);
    job_id = store.create_job(test::tune_job());
    std::vector<VariantRecord> plan;
    for (int bm = 1; bm <= 1150; ++bm) plan.push_back(test::planned(bm, VariantStatus::compiled));
    for (const VariantRecord& v : store.plan_variants(job_id, plan)) variant_ids.push_back(v.id);
    store.set_job_status(job_id, JobStatus::done);  // finished: the daemon does not resume it
  }
  Daemon daemon(dir_.path(), db_, "paged");
  ASSERT_TRUE(daemon.wait_healthy(30s)) << daemon.log();

  const auto one_page = Client(daemon.url()).variants_page(job_id, false, false, "");
  EXPECT_EQ(one_page["variants"].size(), 100u);
  EXPECT_TRUE(one_page["next"].is_string());

  const CliRun json = kerntune(daemon.url(), {"--json", "show", std::to_string(job_id)});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto shown = nlohmann::json::parse(json.out)["variants"];
  ASSERT_EQ(shown.size(), variant_ids.size());
  for (std::size_t i = 0; i < shown.size(); ++i) EXPECT_EQ(shown[i]["id"], variant_ids[i]) << i;

  const CliRun text = kerntune(daemon.url(), {"show", std::to_string(job_id)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::size_t rows = 0;
  for (std::size_t at = text.out.find("gemm_mma"); at != std::string::npos;
       at = text.out.find("gemm_mma", at + 1))
    ++rows;
  EXPECT_EQ(rows, variant_ids.size());
}

TEST_F(CliTest, SubmitWaitHistoryShowThenRestartKeepsHistory) {
  std::string job_id;
  {
    Daemon daemon(dir_.path(), db_, "first");
    ASSERT_TRUE(daemon.wait_healthy(120s)) << daemon.log();
    const std::string server = daemon.url();

    const CliRun families = kerntune(server, {"families"});
    EXPECT_EQ(families.exit_code, 0) << families.err;
    EXPECT_TRUE(contains(families.out, "gemm"));
    EXPECT_TRUE(contains(families.out, "dtypes:"));
    EXPECT_TRUE(contains(families.out, "bf16"));

    const CliRun devices = kerntune(server, {"devices"});
    EXPECT_EQ(devices.exit_code, 0) << devices.err;
    EXPECT_TRUE(contains(devices.out, "no GPU"));

    const CliRun submit =
        kerntune(server, {"submit", "gemm", "--shape", "m=96,n=80,k=40", "--dtype", "bf16",
                          "--mode", "compile", "--arch", "sm_90a", "--budget", "2", "--wait"});
    ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err << daemon.log();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(submit.out, match, std::regex("job (\\d+) done"))) << submit.out;
    job_id = match[1];
    EXPECT_TRUE(contains(submit.err, "variants"));  // the progress line
    EXPECT_TRUE(contains(submit.err, "compiled"));

    const CliRun history = kerntune(server, {"history"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_TRUE(contains(history.out, "done"));
    EXPECT_TRUE(contains(history.out, "M=96 N=80 K=40"));
    EXPECT_TRUE(contains(history.out, "sm_90a"));

    const CliRun show = kerntune(server, {"show", job_id});
    EXPECT_EQ(show.exit_code, 0) << show.err;
    EXPECT_TRUE(contains(show.out, "job " + job_id + ": done"));
    EXPECT_TRUE(contains(show.out, "regs"));
    EXPECT_TRUE(contains(show.out, "compiled"));

    const CliRun json = kerntune(server, {"--json", "history"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto jobs = nlohmann::json::parse(json.out)["jobs"];
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0]["id"].dump(), job_id);

    // Errors: a clear message and a non-zero exit code.
    const CliRun tune =
        kerntune(server, {"submit", "gemm", "--shape", "m=64,n=64,k=64", "--dtype", "bf16"});
    EXPECT_EQ(tune.exit_code, 1);
    EXPECT_TRUE(contains(tune.err, "no GPU on this host"));
    const CliRun best =
        kerntune(server, {"best", "gemm", "--shape", "M=96,N=80,K=40", "--dtype", "bf16"});
    EXPECT_EQ(best.exit_code, 1);
    EXPECT_TRUE(contains(best.err, "nothing tuned for"));
    const CliRun missing = kerntune(server, {"show", "99999"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no job 99999"));
    const CliRun bad_shape =
        kerntune(server, {"submit", "gemm", "--shape", "m=64,n=sixty", "--dtype", "bf16"});
    EXPECT_NE(bad_shape.exit_code, 0);
    EXPECT_TRUE(contains(bad_shape.err, "integer"));

    EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();  // a clean stop
  }
  {
    Daemon daemon(dir_.path(), db_, "second");
    ASSERT_TRUE(daemon.wait_healthy(120s)) << daemon.log();
    const CliRun history = kerntune(daemon.url(), {"history"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_TRUE(contains(history.out, "done"));
    EXPECT_TRUE(contains(history.out, "M=96 N=80 K=40"));
    const CliRun show = kerntune(daemon.url(), {"show", job_id});
    EXPECT_EQ(show.exit_code, 0) << show.err;

    const std::string url = daemon.url();
    daemon.stop(SIGKILL);
    const CliRun gone = kerntune(url, {"history"});
    EXPECT_EQ(gone.exit_code, 3);
    EXPECT_TRUE(contains(gone.err, "cannot reach kerntuned at " + url));
  }
}

}  // namespace
}  // namespace kt
