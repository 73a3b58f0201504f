#include "support/postgres_cluster.hpp"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "db/connection.hpp"
#include "support/child_process.hpp"

namespace kt::test {
namespace {

constexpr const char* kUser = "kerntune";

bool has_server(const std::filesystem::path& bindir) {
  return std::filesystem::exists(bindir / "initdb") && std::filesystem::exists(bindir / "postgres");
}

// The unprivileged account the server runs as when the tests run as root.
struct Account {
  uid_t uid;
  gid_t gid;
};
std::optional<Account> unprivileged_account() {
  if (geteuid() != 0) return std::nullopt;
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr)
    throw std::runtime_error("running as root, and there is no user 'nobody' to run PostgreSQL as");
  return Account{nobody->pw_uid, nobody->pw_gid};
}

// Starts argv as `account` (if any) with output to log; the child dies with this process.
pid_t start(const std::vector<std::string>& argv, const std::filesystem::path& log,
            const std::optional<Account>& account) {
  // Everything the child needs is made before fork: it only calls async-signal-safe functions.
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
  }
  if (account &&
      (setgroups(0, nullptr) != 0 || setgid(account->gid) != 0 || setuid(account->uid) != 0))
    _exit(126);
  // After the change of user, which would clear it: the server goes when the tests go.
  prctl(PR_SET_PDEATHSIG, SIGQUIT);
  execv(args[0], args.data());
  _exit(127);
}

void give_to(const std::filesystem::path& dir, const std::optional<Account>& account) {
  if (!account) return;
  if (chown(dir.c_str(), account->uid, account->gid) != 0)
    throw std::runtime_error("cannot hand " + dir.string() + " to user nobody");
}

}  // namespace

std::string postgres_bindir() {
  std::array<char, 4096> buffer{};
  std::string out;
  if (FILE* pipe = popen("pg_config --bindir 2>/dev/null", "r")) {
    while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) out += buffer.data();
    pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!out.empty() && has_server(out)) return out;
  std::filesystem::path best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version && has_server(entry.path() / "bin")) {
      best_version = version;
      best = entry.path() / "bin";
    }
  }
  return best.string();
}

PostgresCluster& PostgresCluster::shared() {
  static PostgresCluster cluster;
  return cluster;
}

PostgresCluster::PostgresCluster() : owner_(getpid()), dir_(std::make_unique<TempDir>()) {
  bindir_ = postgres_bindir();
  const std::string& bindir = bindir_;
  if (bindir.empty())
    throw std::runtime_error(
        "PostgreSQL's server binaries (initdb, postgres) are not installed: the store's "
        "PostgreSQL tests need them (Debian package postgresql; scripts/install-deps.sh "
        "installs it)");
  const auto account = unprivileged_account();
  give_to(dir_->path(), account);
  const auto data = dir_->path() / "data";
  const auto log = dir_->path() / "server.log";
  const pid_t initdb = start({bindir + "/initdb", "-D", data.string(), "-A", "trust", "-U", kUser,
                              "-N", "-E", "UTF8", "--no-locale"},
                             log, account);
  const auto initdb_exit = wait_exit(initdb, std::chrono::seconds(120));
  if (initdb_exit != 0)
    throw std::runtime_error("initdb failed (exit " +
                             (initdb_exit ? std::to_string(*initdb_exit) : "timeout") + "):\n" +
                             read_text(log));
  start_server();
}

void PostgresCluster::start_server() {
  const auto account = unprivileged_account();
  const auto data = dir_->path() / "data";
  const auto log = dir_->path() / "server.log";
  // Only the unix socket in the folder; no fsync: the cluster is thrown away.
  server_ =
      start({bindir_ + "/postgres", "-D", data.string(), "-k", dir_->path().string(), "-c",
             "listen_addresses=", "-F", "-c", "shared_buffers=16MB", "-c", "max_connections=200"},
            log, account);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    try {
      db::open_connection(uri("postgres"), db::Access::write);
      return;
    } catch (const std::exception& e) {
      int status = 0;
      if (waitpid(server_, &status, WNOHANG) == server_) {
        server_ = -1;
        throw std::runtime_error("postgres exited at start:\n" + read_text(log));
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(std::string("postgres did not accept connections within 60 s (") +
                                 e.what() + "):\n" + read_text(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::unique_ptr<PostgresCluster> PostgresCluster::own() {
  return std::unique_ptr<PostgresCluster>(new PostgresCluster());
}

void PostgresCluster::stop_immediately() {
  if (server_ <= 0) return;
  kill(server_, SIGQUIT);
  wait_exit(server_, std::chrono::seconds(30));
  server_ = -1;
}

void PostgresCluster::restart() {
  if (server_ > 0) return;
  start_server();
}

PostgresCluster::~PostgresCluster() {
  if (getpid() != owner_) {
    (void)dir_.release();  // the owner's, still in use
    return;
  }
  if (server_ <= 0) return;
  kill(server_, SIGINT);  // fast shutdown: ends the sessions, no checkpoint wait
  wait_exit(server_, std::chrono::seconds(10));  // kills it past the limit
}

std::string PostgresCluster::uri(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_->path().string() + "&user=" + kUser;
}

std::string PostgresCluster::create_database() {
  std::lock_guard lock(mutex_);
  const std::string name = "kt_" + std::to_string(++databases_);
  auto admin = db::open_connection(uri("postgres"), db::Access::write);
  admin->execute_script("CREATE DATABASE " + name);
  return uri(name);
}

}  // namespace kt::test
