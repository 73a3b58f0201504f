// Access control end to end: the real kerntuned started as a child process on 127.0.0.1 with
// --token-file (a token file turns the check on whatever the address) and driven with raw HTTP
// exchanges and the kerntune CLI. Unauthorized writes are refused with 401 and leave no job;
// reads need the token unless --public-reads; /healthz never does. Start-up refusals (a token file
// others can read, a non-loopback --listen without a token) are checked on processes that exit
// before binding anything.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "client/http_transport.hpp"
#include "support/test_paths.hpp"

extern char** environ;

namespace kt {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace http = boost::beast::http;

const std::string kToken = "integration-token-7f3a9c";
// Compile mode needs no GPU, so an authorized submission is accepted (202) on any machine.
const std::string kCompileJob =
    R"({"family":"gemm","shape":{"m":200,"n":136,"k":72},"dtype":"bf16","mode":"compile",)"
    R"("arch":"sm_100a","budget":1})";

std::string read_text(const fs::path& path) {
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

// This process's environment without KERNTUNE_TOKEN*, plus `extra` ("NAME=value").
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    if (text.rfind("KERNTUNE_TOKEN", 0) != 0) env.push_back(text);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Starts a program with stdout and stderr sent to `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log,
            const std::vector<std::string>& extra_env = {}) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_text = child_environment(extra_env);
  std::vector<char*> env;
  for (const auto& entry : env_text) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Exit code, 128 + signal for a killed process, nullopt if it is still running at the deadline.
std::optional<int> wait_exit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
}

fs::path write_token_file(const fs::path& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

std::vector<std::string> daemon_command(const std::string& listen, const fs::path& db,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {(test::binary_dir() / "kerntuned").string(),
                                   "--listen",
                                   listen,
                                   "--db",
                                   db.string(),
                                   "--families",
                                   (test::source_dir() / "kernel_templates").string(),
                                   "--compile-threads",
                                   "1"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not in:\n" << text;
}

// kerntuned on 127.0.0.1 with a token file (mode 600) and the given extra options.
class TokenDaemon {
 public:
  TokenDaemon(const fs::path& dir, const std::vector<std::string>& extra)
      : port_(free_port()), log_(dir / "kerntuned.log") {
    const fs::path token_file = write_token_file(dir / "token", kToken + "\n", 0600);
    std::vector<std::string> options = {"--token-file", token_file.string()};
    options.insert(options.end(), extra.begin(), extra.end());
    pid_ = spawn(daemon_command("127.0.0.1:" + std::to_string(port_), dir / "kerntune.db", options),
                 log_);
  }
  ~TokenDaemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      wait_exit(pid_, 30s);
    }
  }
  TokenDaemon(const TokenDaemon&) = delete;
  TokenDaemon& operator=(const TokenDaemon&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return read_text(log_); }

  // One exchange; token "" sends no Authorization header.
  HttpReply send(http::verb method, const std::string& target, const std::string& token,
                 const std::string& body = "") const {
    return HttpTransport(parse_server_url(url()), 10s, token).send(method, target, body);
  }

  // True once /healthz answers 200 (without a token); false if the daemon exited first.
  bool wait_healthy(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      try {
        if (send(http::verb::get, "/healthz", "").status == 200) return true;
      } catch (const ClientError&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }

 private:
  unsigned short port_;
  fs::path log_;
  pid_t pid_ = -1;
};

void expect_unauthorized(const HttpReply& reply, const std::string& what) {
  EXPECT_EQ(reply.status, 401) << what << ": " << reply.body;
  const auto body = nlohmann::json::parse(reply.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << what << ": " << reply.body;
  EXPECT_EQ(body["error"]["code"], "unauthorized") << what;
}

class AccessControlTest : public ::testing::Test {
 protected:
  struct CliRun {
    std::optional<int> exit_code;
    std::string output;
  };
  CliRun kerntune(const std::string& server, std::vector<std::string> args,
                  const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {(test::binary_dir() / "kerntune").string(), "--server", server});
    const fs::path log = dir_.path() / "cli.log";
    CliRun run;
    run.exit_code = wait_exit(spawn(args, log, env), 60s);
    run.output = read_text(log);
    return run;
  }

  std::size_t jobs_in_history(const TokenDaemon& daemon) {
    const HttpReply reply = daemon.send(http::verb::get, "/v1/history", kToken);
    EXPECT_EQ(reply.status, 200) << reply.body;
    return nlohmann::json::parse(reply.body)["jobs"].size();
  }

  test::TempDir dir_;
};

TEST_F(AccessControlTest, TokenGuardsWritesAndReadsButNotHealthz) {
  TokenDaemon daemon(dir_.path(), {});
  ASSERT_TRUE(daemon.wait_healthy(60s)) << daemon.log();

  // Without the token, or with a near miss, a submission is refused and creates nothing.
  expect_unauthorized(daemon.send(http::verb::post, "/v1/jobs", "", kCompileJob), "no token");
  std::string near_miss = kToken;
  near_miss.back() = near_miss.back() == 'c' ? 'd' : 'c';
  expect_unauthorized(daemon.send(http::verb::post, "/v1/jobs", near_miss, kCompileJob),
                      "last byte differs");
  EXPECT_EQ(jobs_in_history(daemon), 0u);

  // Reads need the token too, and an unknown path does not give away that it is unknown.
  expect_unauthorized(daemon.send(http::verb::get, "/v1/history", ""), "read without token");
  expect_unauthorized(daemon.send(http::verb::get, "/v1/nonexistent", ""), "unknown path");
  EXPECT_EQ(daemon.send(http::verb::get, "/healthz", "").status, 200);

  const HttpReply accepted = daemon.send(http::verb::post, "/v1/jobs", kToken, kCompileJob);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const auto job_id = nlohmann::json::parse(accepted.body)["id"].get<std::int64_t>();
  EXPECT_EQ(jobs_in_history(daemon), 1u);
  expect_unauthorized(daemon.send(http::verb::delete_, "/v1/jobs/" + std::to_string(job_id), ""),
                      "cancel without token");

  // The CLI takes the token from $KERNTUNE_TOKEN, or from --token-file; without it, it fails
  // with the server's 401.
  const CliRun listed = kerntune(daemon.url(), {"--json", "history"}, {"KERNTUNE_TOKEN=" + kToken});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto jobs = nlohmann::json::parse(listed.output)["jobs"];
  ASSERT_EQ(jobs.size(), 1u) << listed.output;
  EXPECT_EQ(jobs[0]["id"], job_id);

  const CliRun from_file = kerntune(
      daemon.url(), {"--token-file", (dir_.path() / "token").string(), "--json", "history"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  EXPECT_EQ(nlohmann::json::parse(from_file.output)["jobs"][0]["id"], job_id);

  const CliRun refused = kerntune(daemon.url(), {"history"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, "401"));
}

TEST_F(AccessControlTest, PublicReadsOpenReadsOnly) {
  TokenDaemon daemon(dir_.path(), {"--public-reads"});
  ASSERT_TRUE(daemon.wait_healthy(60s)) << daemon.log();

  const HttpReply history = daemon.send(http::verb::get, "/v1/history", "");
  EXPECT_EQ(history.status, 200) << history.body;
  EXPECT_EQ(daemon.send(http::verb::get, "/v1/families", "").status, 200);
  expect_unauthorized(daemon.send(http::verb::post, "/v1/jobs", "", kCompileJob), "write");
  EXPECT_EQ(jobs_in_history(daemon), 0u);
  EXPECT_EQ(daemon.send(http::verb::get, "/healthz", "").status, 200);
}

TEST_F(AccessControlTest, RefusesATokenFileOthersCanRead) {
  const fs::path token = write_token_file(dir_.path() / "token", kToken, 0644);
  const fs::path log = dir_.path() / "kerntuned.log";
  const pid_t pid =
      spawn(daemon_command("127.0.0.1:" + std::to_string(free_port()), dir_.path() / "kerntune.db",
                           {"--token-file", token.string()}),
            log);
  const auto code = wait_exit(pid, 20s);
  if (!code) {
    kill(pid, SIGKILL);
    wait_exit(pid, 10s);
  }
  ASSERT_TRUE(code.has_value()) << "still running:\n" << read_text(log);
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(contains(read_text(log), token.string()));
  EXPECT_TRUE(contains(read_text(log), "chmod 600"));
}

// Refused before anything is opened or bound: the process ends at once and the database file is
// never created.
TEST_F(AccessControlTest, NonLoopbackWithoutTokenExitsBeforeServing) {
  for (const std::string listen : {"0.0.0.0:0", ":0"}) {
    const fs::path db = dir_.path() / "never.db";
    const fs::path log = dir_.path() / "kerntuned.log";
    const pid_t pid = spawn(daemon_command(listen, db, {}), log);
    const auto code = wait_exit(pid, 10s);
    if (!code) {
      kill(pid, SIGKILL);
      wait_exit(pid, 10s);
    }
    ASSERT_TRUE(code.has_value()) << listen << " still running:\n" << read_text(log);
    EXPECT_NE(*code, 0) << listen;
    EXPECT_TRUE(contains(read_text(log), "--token-file")) << listen;
    EXPECT_TRUE(contains(read_text(log), "--insecure")) << listen;
    EXPECT_FALSE(fs::exists(db)) << listen;
  }
}

}  // namespace
}  // namespace kt
