#include "support/daemon_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/ip/tcp.hpp>

#include "client/kerntune_client.hpp"
#include "support/test_paths.hpp"

extern char** environ;

namespace kt::test {
namespace {

unsigned short free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

DaemonProcess::DaemonProcess(const std::filesystem::path& db, const std::filesystem::path& families,
                             const std::filesystem::path& log, std::vector<std::string> extra_args)
    : port_(free_port()), log_(log) {
  std::vector<std::string> argv{(binary_dir() / "kerntuned").string(),
                                "--listen",
                                "127.0.0.1:" + std::to_string(port_),
                                "--db",
                                db.string(),
                                "--families",
                                families.string(),
                                "--worker",
                                (binary_dir() / "kerntune-worker").string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop(SIGKILL);
}

std::string DaemonProcess::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool DaemonProcess::alive() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

bool DaemonProcess::wait_healthy(std::chrono::seconds limit) {
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!alive()) return false;
    try {
      if (Client(url(), 2s).health()["status"] == "ok") return true;
    } catch (const ClientError&) {
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

int DaemonProcess::stop(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  const pid_t waited = waitpid(pid_, &status, 0);
  pid_ = -1;
  return waited < 0 ? -1 : exit_code(status);
}

std::string DaemonProcess::log() const {
  std::ifstream in(log_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kt::test
