#include "harness/daemon_process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "client/kerntune_client.hpp"
#include "tuner/compile/compile_confinement.hpp"
#include "tuner/text.hpp"

namespace kt::harness {
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
    : DaemonProcess(exe, db, log, DaemonOptions{extra_args, "", std::nullopt, std::nullopt}) {}

DaemonProcess::DaemonProcess(const std::filesystem::path& exe, const std::filesystem::path& db,
                             const std::filesystem::path& log, const DaemonOptions& options)
    : port_(options.listen.empty() ? free_loopback_port() : 0), log_(log) {
  if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
  const std::string listen =
      options.listen.empty() ? "127.0.0.1:" + std::to_string(port_) : options.listen;
  std::vector<std::string> args = {exe.string(), "--listen", listen, "--db", db.string()};
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  // A daemon that takes uploads refuses to start where compiles cannot be confined; on such a
  // kernel the tests still need one, and the confinement tests skip themselves.
  const auto has = [&](const char* flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
  };
  if (has("--allow-user-families") && !has("--unconfined-compiles") &&
      !landlock_support().available())
    args.push_back("--unconfined-compiles");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log_text = log.string();
  const auto limit = options.open_files_limit;
  const auto user = options.run_as;

  // fork + exec rather than posix_spawn: the limit and the user are set in the child alone.
  pid_ = fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "cannot fork");
  if (pid_ == 0) {  // only async-signal-safe calls until exec
    if (limit) {
      const rlimit open_files{*limit, *limit};
      if (setrlimit(RLIMIT_NOFILE, &open_files) != 0) _exit(126);
    }
    const int null_in = open("/dev/null", O_RDONLY);
    const int out = open(log_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null_in < 0 || out < 0) _exit(126);
    dup2(null_in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    if (user && (setgroups(0, nullptr) != 0 || setgid(*user) != 0 || setuid(*user) != 0))
      _exit(125);
    execv(argv[0], argv.data());
    _exit(127);
  }
}

DaemonProcess::~DaemonProcess() {
  stop(std::chrono::seconds(5));
}

std::string DaemonProcess::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool DaemonProcess::healthy_within(std::chrono::seconds limit) {
  try {
    wait_healthy(limit);
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

std::optional<int> DaemonProcess::exit_code_within(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pid_ > 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

int DaemonProcess::signal_and_wait(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
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

std::string DaemonProcess::log() const {
  try {
    return read_text_file(log_);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace kt::harness
