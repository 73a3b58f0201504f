// The real kerntuned at its limits, started as a child process on loopback: it refuses to start
// on a database it cannot write or a folder without kernel families (exit code and a message
// naming the path), it answers connections over --max-connections with 503 + Retry-After, and
// when it runs out of descriptors it backs off instead of spinning, keeps its log small and
// serves again once the connections close. Plain sockets, so that the test sees exactly what the
// daemon sends.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/kerntune_client.hpp"
#include "db/store.hpp"
#include "harness/daemon_process.hpp"
#include "support/process_table.hpp"
#include "support/scoped_env.hpp"
#include "support/store_probes.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not in:\n" << text;
}

// An open TCP connection to 127.0.0.1, closed with the object.
class Connection {
 public:
  explicit Connection(unsigned short port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Connection() { close(); }
  Connection(Connection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send_text(const std::string& text) const {
    if (fd_ >= 0) (void)::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
  }
  // Reads what arrives until the peer closes or the time is up.
  std::string read_until_closed(std::chrono::milliseconds limit) const {
    std::string text;
    const auto deadline = Clock::now() + limit;
    while (fd_ >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left <= 0ms) break;
      pollfd ready{fd_, POLLIN, 0};
      if (poll(&ready, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[4096];
      const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
    }
    return text;
  }

 private:
  int fd_;
};

struct HttpAnswer {
  int status = 0;    // 0: no answer
  std::string text;  // status line, headers and body
};

// GET path on a fresh connection (Connection: close).
HttpAnswer http_get(unsigned short port, const std::string& path,
                    std::chrono::milliseconds limit = 3000ms) {
  Connection connection(port);
  HttpAnswer answer;
  if (!connection.connected()) return answer;
  connection.send_text("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  answer.text = connection.read_until_closed(limit);
  if (answer.text.rfind("HTTP/1.1 ", 0) == 0 && answer.text.size() >= 12)
    answer.status = std::stoi(answer.text.substr(9, 3));
  return answer;
}

// kerntuned as a child, its output in dir/<tag>.log, optionally under a low open-files limit or
// as another user (both set in the child alone). Stopped and reaped with the object.
class Kerntuned : public harness::DaemonProcess {
 public:
  // exe: the daemon to start; a dropped user runs a copy it can reach (reachable_daemon).
  Kerntuned(const fs::path& dir, const std::string& tag, const fs::path& db,
            std::vector<std::string> args, std::optional<rlim_t> open_files_limit = std::nullopt,
            std::optional<uid_t> run_as = std::nullopt,
            const fs::path& exe = test::binary_dir() / "kerntuned")
      : DaemonProcess(exe, db, dir / (tag + ".log"),
                      options(std::move(args), open_files_limit, run_as)) {}

  // Descriptors the daemon holds now.
  std::size_t open_descriptors() const {
    const fs::path fds = "/proc/" + std::to_string(pid()) + "/fd";
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(fds), fs::directory_iterator()));
  }

 private:
  static harness::DaemonOptions options(std::vector<std::string> args,
                                        std::optional<rlim_t> open_files_limit,
                                        std::optional<uid_t> run_as) {
    harness::DaemonOptions options;
    options.extra_args = {"--compile-threads", "2"};
    options.extra_args.insert(options.extra_args.end(), args.begin(), args.end());
    options.open_files_limit = open_files_limit;
    options.run_as = run_as;
    return options;
  }
};

// As root, permission bits bind nobody: the read-only tests then run the daemon as this user
// (nobody) on files it owns.
constexpr uid_t kUnprivileged = 65534;

class DaemonLimitsTest : public ::testing::Test {
 protected:
  // The user the read-only tests run the daemon as: none (ourselves) unless we are root, then an
  // unprivileged one that may enter the test folder.
  std::optional<uid_t> unprivileged_daemon() {
    if (geteuid() != 0) return std::nullopt;
    fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read |
                                     fs::perms::others_exec);
    return kUnprivileged;
  }

  // The daemon as a dropped user can run it wherever the checkout is (a clone in a 0700 home
  // folder): the daemon, its worker and the libraries beside them copied into the test's own
  // folder, which unprivileged_daemon opened to everyone.
  fs::path reachable_daemon() {
    const fs::path bin = dir_.path() / "bin";
    if (fs::exists(bin / "kerntuned")) return bin / "kerntuned";
    fs::create_directories(bin);
    for (const auto& entry : fs::directory_iterator(test::binary_dir())) {
      const std::string name = entry.path().filename().string();
      if (name == "kerntuned" || name == "kerntune-worker" || name.find(".so") != std::string::npos)
        fs::copy(entry.path(), bin / name, fs::copy_options::copy_symlinks);
    }
    fs::permissions(bin, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    return bin / "kerntuned";
  }

  std::vector<std::string> with_families(std::vector<std::string> args) const {
    args.insert(args.end(), {"--families", (test::source_dir() / "kernel_templates").string()});
    return args;
  }

  test::TempDir dir_;
  fs::path db_ = dir_.path() / "kerntune.db";
};

constexpr auto kStartupCheckLimit = 15s;  // the checks run before the (slower) GPU probe

// Runs as root too: no permission bits are involved, so root cannot write there either.
TEST_F(DaemonLimitsTest, DatabaseWhoseFolderCannotExistIsRefusedNamingThePath) {
  const fs::path plain_file = dir_.path() / "plain-file";
  std::ofstream(plain_file) << "not a folder\n";
  const fs::path under_file = plain_file / "kerntune.db";
  {
    Kerntuned daemon(dir_.path(), "under-file", under_file, with_families({}));
    const auto code = daemon.exit_code_within(kStartupCheckLimit);
    ASSERT_TRUE(code.has_value()) << "still running; log:\n" << daemon.log();
    EXPECT_NE(*code, 0);
    EXPECT_TRUE(contains(daemon.log(), under_file.string()));
    EXPECT_TRUE(contains(daemon.log(), "is not a folder"));
  }
  {
    const fs::path in_proc = "/proc/kt-test/kerntune.db";
    Kerntuned daemon(dir_.path(), "in-proc", in_proc, with_families({}));
    const auto code = daemon.exit_code_within(kStartupCheckLimit);
    ASSERT_TRUE(code.has_value()) << "still running; log:\n" << daemon.log();
    EXPECT_NE(*code, 0);
    EXPECT_TRUE(contains(daemon.log(), in_proc.string()));
    EXPECT_TRUE(contains(daemon.log(), "does not exist"));
  }
}

TEST_F(DaemonLimitsTest, ReadOnlyDatabaseFileIsRefusedNamingThePathAndTheFix) {
  const std::optional<uid_t> run_as = unprivileged_daemon();
  const fs::path folder = dir_.path() / "store";
  fs::create_directory(folder);
  const fs::path db = folder / "kerntune.db";
  { Store create(db); }
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  if (run_as) {  // the daemon's own folder (writable), its file read-only
    ASSERT_EQ(chown(folder.c_str(), *run_as, *run_as), 0);
    ASSERT_EQ(chown(db.c_str(), *run_as, *run_as), 0);
  } else {  // the store itself refuses the file (SQLite would open it read-only, fail writes)
    try {
      Store store(db);
      ADD_FAILURE() << "a read-only database was opened";
    } catch (const std::runtime_error& error) {
      EXPECT_TRUE(contains(error.what(), "read-only"));
      EXPECT_TRUE(contains(error.what(), db.string()));
    }
  }
  Kerntuned daemon(dir_.path(), "read-only-file", db, with_families({}), std::nullopt, run_as,
                   run_as ? reachable_daemon() : test::binary_dir() / "kerntuned");
  const auto code = daemon.exit_code_within(kStartupCheckLimit);
  ASSERT_TRUE(code.has_value()) << "still running; log:\n" << daemon.log();
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(contains(daemon.log(), db.string())) << daemon.log();
  EXPECT_TRUE(contains(daemon.log(), "chmod u+w")) << daemon.log();
}

TEST_F(DaemonLimitsTest, ReadOnlyDatabaseFolderIsRefusedNamingTheFolder) {
  const std::optional<uid_t> run_as = unprivileged_daemon();
  const fs::path folder = dir_.path() / "read-only";
  fs::create_directory(folder);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  if (run_as) {
    ASSERT_EQ(chown(folder.c_str(), *run_as, *run_as), 0);
  }
  Kerntuned daemon(dir_.path(), "read-only-folder", (folder / "kerntune.db"), with_families({}),
                   std::nullopt, run_as,
                   run_as ? reachable_daemon() : test::binary_dir() / "kerntuned");
  const auto code = daemon.exit_code_within(kStartupCheckLimit);
  fs::permissions(folder, fs::perms::owner_all);  // so that the temp folder can be removed
  ASSERT_TRUE(code.has_value()) << "still running; log:\n" << daemon.log();
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(contains(daemon.log(), folder.string() + " is not writable"));
}

TEST_F(DaemonLimitsTest, EmptyFamiliesFolderIsRefusedUnlessAllowEmpty) {
  const fs::path empty = dir_.path() / "no-families";
  fs::create_directory(empty);
  {
    Kerntuned daemon(dir_.path(), "empty", db_, {"--families", empty.string()});
    const auto code = daemon.exit_code_within(kStartupCheckLimit);
    ASSERT_TRUE(code.has_value()) << "still running; log:\n" << daemon.log();
    EXPECT_NE(*code, 0);
    EXPECT_TRUE(contains(daemon.log(), "no kernel family in " + empty.string()));
    EXPECT_TRUE(contains(daemon.log(), "--allow-empty"));
    // A refused start leaves no store and no work folder behind.
    EXPECT_FALSE(fs::exists(db_));
    EXPECT_FALSE(fs::exists(db_.string() + "-wal"));
    EXPECT_FALSE(fs::exists(db_.string() + ".work"));
  }
  {
    Kerntuned daemon(dir_.path(), "allow-empty", db_,
                     {"--families", empty.string(), "--allow-empty"});
    ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
    EXPECT_TRUE(contains(daemon.log(), "--allow-empty"));  // it says why it serves anyway
  }
}

TEST_F(DaemonLimitsTest, ConnectionsOverTheCapAreAnswered503AndTheCapFreesOnClose) {
  constexpr std::size_t kCap = 4;
  constexpr std::size_t kOpened = 10;
  Kerntuned daemon(dir_.path(), "cap", db_,
                   with_families({"--max-connections", std::to_string(kCap)}));
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  std::this_thread::sleep_for(300ms);  // the health check's own connection is released

  std::vector<Connection> idle;
  for (std::size_t i = 0; i < kOpened; ++i) {
    idle.emplace_back(daemon.port());
    ASSERT_TRUE(idle.back().connected());
  }
  // Connections are accepted in order: the first kCap become sessions waiting for a request
  // (they hear nothing), every later one is answered at once, without sending a request.
  std::vector<std::string> heard;
  for (const Connection& connection : idle) heard.push_back(connection.read_until_closed(300ms));
  for (std::size_t i = 0; i < kOpened; ++i) {
    if (i < kCap) {
      EXPECT_EQ(heard[i], "") << "connection " << i << " is within the cap";
    } else {
      EXPECT_TRUE(contains(heard[i], "HTTP/1.1 503")) << "connection " << i;
      EXPECT_TRUE(contains(heard[i], "Retry-After: 1")) << "connection " << i;
      EXPECT_TRUE(contains(heard[i], "too_many_connections")) << "connection " << i;
    }
  }
  const HttpAnswer at_cap = http_get(daemon.port(), "/healthz");
  EXPECT_EQ(at_cap.status, 503) << at_cap.text;
  EXPECT_TRUE(contains(at_cap.text, "Retry-After: 1"));

  for (Connection& connection : idle) connection.close();
  const auto closed_at = Clock::now();
  HttpAnswer after;
  while (Clock::now() - closed_at < 3s) {
    after = http_get(daemon.port(), "/healthz");
    if (after.status == 200) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(after.status, 200) << after.text << daemon.log();
  EXPECT_LT(Clock::now() - closed_at, 1s);
}

TEST_F(DaemonLimitsTest, OutOfDescriptorsTheAcceptLoopBacksOffAndRecovers) {
  // How many descriptors an idle daemon holds, so that the limit below leaves it only a few.
  std::size_t idle_descriptors = 0;
  {
    Kerntuned probe(dir_.path(), "descriptors", db_, with_families({}));
    ASSERT_TRUE(probe.healthy_within(120s)) << probe.log();
    std::this_thread::sleep_for(300ms);
    idle_descriptors = probe.open_descriptors();
  }
  ASSERT_GT(idle_descriptors, 3u);
  // 12 to spare: enough to start (the GPU probe's pipes), too few for the one session the cap
  // then allows plus the 503 answers in flight, so accept runs into EMFILE.
  const rlim_t limit = static_cast<rlim_t>(idle_descriptors + 12);
  Kerntuned daemon(dir_.path(), "emfile", db_, with_families({}), limit);
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  EXPECT_TRUE(contains(daemon.log(), "open-files limit is " + std::to_string(limit)));

  std::vector<Connection> flood;
  for (int i = 0; i < 80; ++i) {
    flood.emplace_back(daemon.port());  // completes in the kernel's backlog even unaccepted
    ASSERT_TRUE(flood.back().connected()) << i;
  }
  const std::size_t lines_before = count_lines(daemon.log());
  std::this_thread::sleep_for(2s);
  const std::string during = daemon.log();
  EXPECT_TRUE(contains(during, "accept failed"));  // the limit was really reached
  EXPECT_LT(count_lines(during) - lines_before, 50u) << during;
  EXPECT_LT(during.size(), 64u * 1024u);
  EXPECT_TRUE(daemon.exit_code_within(0ms) == std::nullopt) << daemon.log();

  for (Connection& connection : flood) connection.close();
  const auto closed_at = Clock::now();
  HttpAnswer after;
  while (Clock::now() - closed_at < 10s) {
    after = http_get(daemon.port(), "/healthz", 2000ms);
    if (after.status == 200) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(after.status, 200) << after.text << daemon.log();
  EXPECT_LT(count_lines(daemon.log()), lines_before + 60) << daemon.log();
}

// Submits a small compile-mode job and waits until the daemon runs at least one compile process
// (started by a compile thread on its first compile); returns them.
std::vector<pid_t> compile_processes_of_a_job(const Kerntuned& daemon) {
  Client client(daemon.url());
  const JobSpec spec = test::gemm_compile_job(4);
  client.submit_job(spec);
  // Under SCHED_IDLE on a busy machine a compile thread may wait a while for a core.
  const auto deadline = Clock::now() + 120s;
  std::vector<pid_t> found;
  while (found.empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    found = test::children_with_argument(daemon.pid(), "--compile");
  }
  return found;
}

// Requests come first by default (issue 11): NVRTC runs in the compile threads' child processes
// (kerntune-worker --compile), and those, like the daemon's two compile threads and its shape
// predictors' refit thread, run under SCHED_IDLE unless KERNTUNE_COMPILE_NICE (as the tests'
// daemons have it) says otherwise.
TEST_F(DaemonLimitsTest, CompileThreadsRunUnderSchedIdleUnlessToldOtherwise) {
  const auto idle = [](const std::pair<int, int>& thread) { return thread.first == SCHED_IDLE; };
  {
    test::ScopedEnv unset("KERNTUNE_COMPILE_NICE", std::nullopt);
    Kerntuned daemon(dir_.path(), "default-nice", db_, with_families({}));
    ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
    const auto threads = test::thread_scheduling(daemon.pid());
    // Two compile threads and the refit thread.
    EXPECT_EQ(std::count_if(threads.begin(), threads.end(), idle), 3) << daemon.log();
    const std::vector<pid_t> compilers = compile_processes_of_a_job(daemon);
    ASSERT_FALSE(compilers.empty()) << daemon.log();
    EXPECT_LE(compilers.size(), 2u);  // one per compile thread at most
    for (const pid_t compiler : compilers) {
      const auto compiler_threads = test::thread_scheduling(compiler);
      ASSERT_FALSE(compiler_threads.empty());
      EXPECT_TRUE(std::all_of(compiler_threads.begin(), compiler_threads.end(), idle))
          << "compile process " << compiler << " has a thread outside SCHED_IDLE";
    }
  }
  const int niced = std::min(19, getpriority(PRIO_PROCESS, 0) + 10);
  const auto at_niced = [&](const std::pair<int, int>& thread) {
    return thread.first == SCHED_OTHER && thread.second == niced;
  };
  test::ScopedEnv ten("KERNTUNE_COMPILE_NICE", "10");
  Kerntuned daemon(dir_.path(), "nice-10", dir_.path() / "second.db", with_families({}));
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  const auto threads = test::thread_scheduling(daemon.pid());
  EXPECT_EQ(std::count_if(threads.begin(), threads.end(), idle), 0);
  EXPECT_EQ(std::count_if(threads.begin(), threads.end(), at_niced), 3);
  const std::vector<pid_t> compilers = compile_processes_of_a_job(daemon);
  ASSERT_FALSE(compilers.empty()) << daemon.log();
  for (const pid_t compiler : compilers) {
    const auto compiler_threads = test::thread_scheduling(compiler);
    ASSERT_FALSE(compiler_threads.empty());
    EXPECT_TRUE(std::all_of(compiler_threads.begin(), compiler_threads.end(), at_niced))
        << "compile process " << compiler << " has a thread not at nice " << niced;
  }
}

}  // namespace
}  // namespace kt
