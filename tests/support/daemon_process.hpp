// The real kerntuned as a child process on a free loopback port, for tests that drive the daemon
// the way a user does: started with a database and a families folder, asked over HTTP, killed at
// the end. Its stdout and stderr go to a log file the test can print on failure.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace kt::test {

class DaemonProcess {
 public:
  // Starts build/bin/kerntuned --listen 127.0.0.1:<free port> --db <db> --families <families>
  // plus `extra_args`. Throws std::runtime_error if it cannot be started.
  DaemonProcess(const std::filesystem::path& db, const std::filesystem::path& families,
                const std::filesystem::path& log, std::vector<std::string> extra_args = {});
  ~DaemonProcess();  // SIGKILL if still running
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  std::string url() const;
  // True once /healthz answers; false if the daemon exited or the time ran out.
  bool wait_healthy(std::chrono::seconds limit);
  // Still running (not exited, not killed)?
  bool alive();
  // Sends the signal and returns the exit code (128 + signal if it did not handle it).
  int stop(int signal);
  std::string log() const;

 private:
  unsigned short port_ = 0;
  std::filesystem::path log_;
  pid_t pid_ = -1;
};

}  // namespace kt::test
