// A child process with its stdin and stdout on pipes (stderr inherited), for line-based
// protocols: write a line, read a line with a deadline, and end it for sure. The owner always
// reaps the child: no zombies, even when it is killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kt {

// An account a child process runs as (a daemon started as root hands compiles to nobody).
struct ProcessUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  bool operator==(const ProcessUser&) const = default;
};

// The account's ids from the user database. Throws std::runtime_error naming it if there is none.
ProcessUser lookup_process_user(const std::string& name);

// Empty when `user` has `mode` (access(2): X_OK to run a file, R_OK | X_OK to read a folder) on
// path, every folder on the way searchable; else why not, as that user sees it. Asked in a child
// that takes the user's identity.
std::string why_user_cannot_access(const ProcessUser& user, const std::filesystem::path& path,
                                   int mode);

class ChildProcess {
 public:
  // fork/exec of exe with args, as `user` when given (this process must be root then). Every
  // other descriptor of this process is closed in the child. Throws std::system_error if the
  // process cannot be started (e.g. exe missing, or the user may not run it).
  ChildProcess(const std::filesystem::path& exe, const std::vector<std::string>& args,
               const std::optional<ProcessUser>& user = std::nullopt);
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Non-blocking check; reaps the child if it has exited (running() turns false).
  bool alive();

  enum class WriteStatus { written, timeout, closed };
  // Writes text + '\n' to the child's stdin, waiting for room in the pipe until deadline (a child
  // that stops reading cannot hold the caller past it). closed: the child closed it (it died).
  WriteStatus write_line(const std::string& text, std::chrono::steady_clock::time_point deadline);
  // As above without a deadline: false if the child closed its stdin.
  bool write_line(const std::string& text);
  // Closes the child's stdin (it sees EOF).
  void close_stdin();

  enum class ReadStatus { line, timeout, eof };
  // Reads the next line (without '\n') from the child's stdout until deadline.
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline);

  // Waits up to grace for the child to exit on its own, then SIGKILLs it; reaps it and says how
  // it ended ("exited with status 3", "killed by signal 11 (Segmentation fault)").
  std::string wait(std::chrono::milliseconds grace);
  // SIGKILL now, then reap.
  std::string kill();

 private:
  void close_pipes();
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;  // bytes read past the last returned line
};

// "exited with status N" / "killed by signal N (name)" for a waitpid status.
std::string describe_exit_status(int status);

}  // namespace kt
