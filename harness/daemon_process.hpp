// A kerntuned of its own on a free loopback port with the given database, its output in a log
// file; stopped (SIGTERM, then SIGKILL) and reaped with the owner. The engine benchmark runs each
// sweep on a fresh one so that both sweeps start from an empty compile cache and, as job 1 of
// their database, draw the same seeded sample of the space; the daemon-level tests drive one the
// way a user does. It lives in harness/, beside bench/ and tests/ rather than in either, because
// both use it: neither has to include or link the other.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kt::harness {

// A TCP port on 127.0.0.1 that was free a moment ago.
unsigned short free_loopback_port();

struct DaemonOptions {
  std::vector<std::string> extra_args;
  // "HOST:PORT" for --listen instead of 127.0.0.1 and a free port (for addresses it must refuse).
  std::string listen;
  std::optional<rlim_t> open_files_limit;  // RLIMIT_NOFILE of the daemon alone
  // A user (and group) id to drop to before exec: tests run as root can then see permission bits.
  std::optional<uid_t> run_as;
};

class DaemonProcess {
 public:
  // Starts exe --listen 127.0.0.1:<free port> --db db [extra_args...], stdout and stderr to log.
  // Throws std::system_error if it cannot be started.
  DaemonProcess(const std::filesystem::path& exe, const std::filesystem::path& db,
                const std::filesystem::path& log, const std::vector<std::string>& extra_args = {});
  DaemonProcess(const std::filesystem::path& exe, const std::filesystem::path& db,
                const std::filesystem::path& log, const DaemonOptions& options);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  std::string url() const;
  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  // Waits for GET /healthz; throws std::runtime_error with the log's tail if the daemon exits or
  // does not answer in time.
  void wait_healthy(std::chrono::seconds limit);
  // As wait_healthy, but false instead of an exception.
  bool healthy_within(std::chrono::seconds limit);
  // The exit code (128 + signal if killed) if the daemon ends within the limit.
  std::optional<int> exit_code_within(std::chrono::milliseconds limit);
  // Sends the signal and waits for the end: the exit code, 128 + signal if it did not handle it.
  int signal_and_wait(int signal);
  // Still running (not exited, not stopped)?
  bool alive();
  // SIGTERM, up to grace for it to exit, then SIGKILL; says how it ended. Idempotent.
  std::string stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // SIGKILL at once, as a crash would, and reap; true if it was still running when killed.
  bool kill_now();
  // True once the log holds `text` (polled); false after the limit.
  bool wait_for_log(const std::string& text, std::chrono::seconds limit) const;
  // The last max_bytes of the log.
  std::string log_tail(std::size_t max_bytes = 4000) const;
  std::string log() const;  // all of it ("" before the daemon wrote anything)

 private:
  pid_t pid_ = -1;
  unsigned short port_ = 0;
  std::filesystem::path log_;
};

}  // namespace kt::harness
