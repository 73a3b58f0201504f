// A child process with its stdin and stdout on pipes (stderr inherited), for line-based
// protocols: write a line, read a line with a deadline, and end it for sure. The owner always
// reaps the child: no zombies, even when it is killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace kt {

class ChildProcess {
 public:
  // fork/exec of exe with args. Every other descriptor of this process is closed in the child.
  // Throws std::system_error if the process cannot be started (e.g. exe missing).
  ChildProcess(const std::filesystem::path& exe, const std::vector<std::string>& args);
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
