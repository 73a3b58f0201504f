// Access control end to end: the real kerntuned started as a child process on 127.0.0.1 with
// --token-file (a token file turns the check on whatever the address) and driven with raw HTTP
// exchanges and the kerntune CLI. Unauthorized writes are refused with 401 and leave no job;
// reads need the token unless --public-reads; /healthz never does. Start-up refusals (a token file
// others can read, a non-loopback --listen without a token) are checked on processes that exit
// before binding anything.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/http_transport.hpp"
#include "harness/daemon_process.hpp"
#include "support/child_process.hpp"
#include "support/test_paths.hpp"

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

fs::path write_token_file(const fs::path& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

// kerntuned's options here: the shipped families, one compile thread, then `extra`.
harness::DaemonOptions daemon_options(const std::vector<std::string>& extra,
                                      const std::string& listen = "") {
  harness::DaemonOptions options;
  options.extra_args = {"--families", (test::source_dir() / "kernel_templates").string(),
                        "--compile-threads", "1"};
  options.extra_args.insert(options.extra_args.end(), extra.begin(), extra.end());
  options.listen = listen;
  return options;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not in:\n" << text;
}

// kerntuned on 127.0.0.1 with a token file (mode 600) and the given extra options.
class TokenDaemon : public harness::DaemonProcess {
 public:
  TokenDaemon(const fs::path& dir, const std::vector<std::string>& extra)
      : DaemonProcess(test::binary_dir() / "kerntuned", dir / "kerntune.db", dir / "kerntuned.log",
                      with_token_file(dir, extra)) {}

  // One exchange; token "" sends no Authorization header.
  HttpReply send(http::verb method, const std::string& target, const std::string& token,
                 const std::string& body = "") const {
    return HttpTransport(parse_server_url(url()), 10s, token).send(method, target, body);
  }

 private:
  static harness::DaemonOptions with_token_file(const fs::path& dir,
                                                const std::vector<std::string>& extra) {
    const fs::path token_file = write_token_file(dir / "token", kToken + "\n", 0600);
    std::vector<std::string> options = {"--token-file", token_file.string()};
    options.insert(options.end(), extra.begin(), extra.end());
    return daemon_options(options);
  }
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
    run.exit_code = test::wait_exit(test::spawn(args, log, log, env), 60s);
    run.output = test::read_text(log);
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
  ASSERT_TRUE(daemon.healthy_within(60s)) << daemon.log();

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
  ASSERT_TRUE(daemon.healthy_within(60s)) << daemon.log();

  const HttpReply history = daemon.send(http::verb::get, "/v1/history", "");
  EXPECT_EQ(history.status, 200) << history.body;
  EXPECT_EQ(daemon.send(http::verb::get, "/v1/families", "").status, 200);
  expect_unauthorized(daemon.send(http::verb::post, "/v1/jobs", "", kCompileJob), "write");
  EXPECT_EQ(jobs_in_history(daemon), 0u);
  EXPECT_EQ(daemon.send(http::verb::get, "/healthz", "").status, 200);
}

TEST_F(AccessControlTest, RefusesATokenFileOthersCanRead) {
  const fs::path token = write_token_file(dir_.path() / "token", kToken, 0644);
  harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", dir_.path() / "kerntune.db",
                                dir_.path() / "kerntuned.log",
                                daemon_options({"--token-file", token.string()}));
  const auto code = daemon.exit_code_within(20s);
  ASSERT_TRUE(code.has_value()) << "still running:\n" << daemon.log();
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(contains(daemon.log(), token.string()));
  EXPECT_TRUE(contains(daemon.log(), "chmod 600"));
}

// Refused before anything is opened or bound: the process ends at once and the database file is
// never created.
TEST_F(AccessControlTest, NonLoopbackWithoutTokenExitsBeforeServing) {
  for (const std::string listen : {"0.0.0.0:0", ":0"}) {
    const fs::path db = dir_.path() / "never.db";
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db,
                                  dir_.path() / "kerntuned.log", daemon_options({}, listen));
    const auto code = daemon.exit_code_within(10s);
    ASSERT_TRUE(code.has_value()) << listen << " still running:\n" << daemon.log();
    EXPECT_NE(*code, 0) << listen;
    EXPECT_TRUE(contains(daemon.log(), "--token-file")) << listen;
    EXPECT_TRUE(contains(daemon.log(), "--insecure")) << listen;
    EXPECT_FALSE(fs::exists(db)) << listen;
  }
}

}  // namespace
}  // namespace kt
