#include "bench/daemon_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "bench/output_files.hpp"
#include "client/kerntune_client.hpp"

extern char** environ;

namespace kt::bench {
namespace {

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace

unsigned short free_loopback_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

DaemonProcess::DaemonProcess(const std::filesystem::path& exe, const std::filesystem::path& db,
                             const std::filesystem::path& log,
                             const std::vector<std::string>& extra_args)
    : port_(free_loopback_port()), log_(log) {
  if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
  std::vector<std::string> args = {exe.string(), "--listen", "127.0.0.1:" + std::to_string(port_),
                                   "--db", db.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const int error = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    pid_ = -1;
    throw std::system_error(error, std::generic_category(), "cannot start " + exe.string());
  }
}

DaemonProcess::~DaemonProcess() {
  stop(std::chrono::seconds(5));
}

std::string DaemonProcess::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool DaemonProcess::alive() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  pid_ = -1;
  return false;
}

void DaemonProcess::wait_healthy(std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("kerntuned " + describe(status) + " before it answered; log:\n" +
                               log_tail());
    }
    try {
      if (kt::Client(url(), std::chrono::seconds(2)).health().value("status", "") == "ok") return;
    } catch (const kt::ClientError&) {
      // not listening yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("kerntuned did not answer on " + url() + " within " +
                           std::to_string(limit.count()) + " s; log:\n" + log_tail());
}

std::string DaemonProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "not running";
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  pid_ = -1;
  return describe(status);
}

bool DaemonProcess::kill_now() {
  if (!alive()) return false;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

bool DaemonProcess::wait_for_log(const std::string& text, std::chrono::seconds limit) const {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (read_text_file(log_).find(text) != std::string::npos) return true;
    } catch (const std::exception&) {
      // no log yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string DaemonProcess::log_tail(std::size_t max_bytes) const {
  try {
    const std::string text = read_text_file(log_);
    return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
  } catch (const std::exception&) {
    return "(no log)";
  }
}

}  // namespace kt::bench
