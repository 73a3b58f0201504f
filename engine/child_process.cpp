#include "engine/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace kt {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// In the forked child (async-signal-safe calls only): mark every descriptor above 2 close-on-exec,
// so the worker inherits nothing of the daemon (sockets, the database, other workers' pipes).
void close_other_descriptors_on_exec(int max_fd) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0) return;
#endif
  for (int fd = 3; fd < max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// In the forked child: the user's identity, no supplementary groups. Raw system calls, which
// change this thread only: the child of fork has no other.
bool become(const ProcessUser& user) {
  return syscall(SYS_setgroups, 0, nullptr) == 0 &&
         syscall(SYS_setresgid, user.gid, user.gid, user.gid) == 0 &&
         syscall(SYS_setresuid, user.uid, user.uid, user.uid) == 0;
}

}  // namespace

ProcessUser lookup_process_user(const std::string& name) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  const int error = getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr)
    throw std::runtime_error("no user named '" + name.substr(0, 64) + "'" +
                             (error != 0 ? std::string(" (") + std::strerror(error) + ")" : ""));
  return ProcessUser{name, entry.pw_uid, entry.pw_gid};
}

std::string why_user_cannot_access(const ProcessUser& user, const std::filesystem::path& target,
                                   int mode) {
  const std::string path = target.string();
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    if (!become(user)) _exit(100);
    _exit(access(path.c_str(), mode) == 0 ? 0 : std::min(errno, 99));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return "the check ended " + describe_exit_status(status);
  const int code = WEXITSTATUS(status);
  if (code == 0) return "";
  if (code == 100) return "this process cannot take the identity of " + user.name;
  return user.name + " cannot " + (mode == X_OK ? "run " : "read ") + path + ": " +
         std::strerror(code);
}

ChildProcess::ChildProcess(const std::filesystem::path& exe, const std::vector<std::string>& args,
                           const std::optional<ProcessUser>& user) {
  int stdin_pipe[2], stdout_pipe[2], exec_status[2];
  if (pipe2(stdin_pipe, O_CLOEXEC) != 0) throw_errno("pipe");
  if (pipe2(stdout_pipe, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(stdin_pipe[0]), ::close(stdin_pipe[1]);
    errno = saved;
    throw_errno("pipe");
  }
  // Closed by a successful exec; carries errno back if exec fails.
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    const int saved = errno;
    for (int fd : {stdin_pipe[0], stdin_pipe[1], stdout_pipe[0], stdout_pipe[1]}) ::close(fd);
    errno = saved;
    throw_errno("pipe");
  }
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls.
  const std::string exe_text = exe.string();
  std::vector<std::string> argv_text{exe_text};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  rlimit limit{};
  const int max_fd = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                         ? static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20))
                         : 4096;

  const pid_t pid = fork();
  if (pid < 0) {
    const int saved = errno;
    for (int fd : {stdin_pipe[0], stdin_pipe[1], stdout_pipe[0], stdout_pipe[1], exec_status[0],
                   exec_status[1]})
      ::close(fd);
    errno = saved;
    throw_errno("fork");
  }
  if (pid == 0) {
    // dup2 clears close-on-exec on the targets: exactly stdin and stdout survive exec.
    if (dup2(stdin_pipe[0], STDIN_FILENO) < 0 || dup2(stdout_pipe[1], STDOUT_FILENO) < 0) {
      const int error = errno;
      (void)!::write(exec_status[1], &error, sizeof error);
      _exit(127);
    }
    close_other_descriptors_on_exec(max_fd);
    if (user && !become(*user)) {
      const int error = errno;
      (void)!::write(exec_status[1], &error, sizeof error);
      _exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the daemon's blocked signals are not the worker's
    execv(argv[0], argv.data());
    const int error = errno;
    (void)!::write(exec_status[1], &error, sizeof error);
    _exit(127);
  }
  pid_ = pid;
  ::close(stdin_pipe[0]);
  ::close(stdout_pipe[1]);
  ::close(exec_status[1]);
  to_child_ = stdin_pipe[1];
  // Non-blocking, so that a write into a full pipe can wait with a deadline (write_line).
  fcntl(to_child_, F_SETFL, fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  from_child_ = stdout_pipe[0];
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_status[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  ::close(exec_status[0]);
  if (got > 0) {  // exec failed: reap the child and report why
    kill();
    errno = exec_errno;
    throw_errno("cannot start " + exe_text);
  }
}

ChildProcess::~ChildProcess() {
  if (running()) kill();
  close_pipes();
}

bool ChildProcess::write_line(const std::string& text) {
  return write_line(text, std::chrono::steady_clock::time_point::max()) == WriteStatus::written;
}

ChildProcess::WriteStatus ChildProcess::write_line(const std::string& text,
                                                   std::chrono::steady_clock::time_point deadline) {
  if (to_child_ < 0) return WriteStatus::closed;
  const std::string line = text + '\n';
  // A dead child's pipe raises SIGPIPE, which would kill the daemon: block it for this thread
  // while writing and swallow the one the write may leave pending.
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  WriteStatus status = WriteStatus::written;
  int error = 0;
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(to_child_, line.data() + written, line.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    error = n < 0 ? errno : EPIPE;
    if (error == EINTR) continue;
    if (error != EAGAIN) {
      status = WriteStatus::closed;
      break;
    }
    // The pipe is full (the descriptor is non-blocking): wait for the child to read, up to the
    // deadline.
    const bool forever = deadline == std::chrono::steady_clock::time_point::max();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!forever && left.count() <= 0) {
      status = WriteStatus::timeout;
      break;
    }
    pollfd room{to_child_, POLLOUT, 0};
    const int ready =
        poll(&room, 1, forever ? -1 : static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno != EINTR) {
      status = WriteStatus::closed;
      break;
    }
  }
  if (status == WriteStatus::closed && error == EPIPE) {
    const timespec no_wait{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return status;
}

bool ChildProcess::alive() {
  if (!running()) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  pid_ = -1;
  close_pipes();
  return false;
}

void ChildProcess::close_stdin() {
  close_fd(to_child_);
}

ChildProcess::ReadStatus ChildProcess::read_line(std::string& line,
                                                 std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return ReadStatus::line;
    }
    if (from_child_ < 0) return ReadStatus::eof;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadStatus::timeout;
    pollfd watch{from_child_, POLLIN, 0};
    const int ready = poll(&watch, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw_errno("poll");
    if (ready == 0) return ReadStatus::timeout;
    char chunk[65536];
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // EOF (or a broken pipe): the child is gone or going
      close_fd(from_child_);
      return ReadStatus::eof;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string ChildProcess::wait(std::chrono::milliseconds grace) {
  if (!running()) return "not running";
  close_stdin();  // a worker waiting for its next request exits on EOF
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) return kill();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  close_pipes();
  return describe_exit_status(status);
}

std::string ChildProcess::kill() {
  if (!running()) return "not running";
  ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t done;
  do done = waitpid(pid_, &status, 0);
  while (done < 0 && errno == EINTR);
  pid_ = -1;
  close_pipes();
  return describe_exit_status(status);
}

void ChildProcess::close_pipes() {
  close_fd(to_child_);
  close_fd(from_child_);
  buffer_.clear();
}

std::string describe_exit_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = strsignal(signal);
    return "killed by signal " + std::to_string(signal) + " (" + (name ? name : "unknown") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace kt
