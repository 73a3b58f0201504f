// A kerntuned of its own on a free loopback port with the given database, its output in a log
// file; stopped (SIGTERM, then SIGKILL) and reaped with the owner. The engine benchmark runs each
// sweep on a fresh one so that both sweeps start from an empty compile cache and, as job 1 of
// their database, draw the same seeded sample of the space; the daemon-level tests drive one the
// way a user does.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace kt::bench {

// A TCP port on 127.0.0.1 that was free a moment ago.
unsigned short free_loopback_port();

class DaemonProcess {
 public:
  // Starts exe --listen 127.0.0.1:<free port> --db db [extra_args...], stdout and stderr to log.
  // Throws std::system_error if it cannot be started.
  DaemonProcess(const std::filesystem::path& exe, const std::filesystem::path& db,
                const std::filesystem::path& log, const std::vector<std::string>& extra_args = {});
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  std::string url() const;
  // Waits for GET /healthz; throws std::runtime_error with the log's tail if the daemon exits or
  // does not answer in time.
  void wait_healthy(std::chrono::seconds limit);
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

 private:
  pid_t pid_ = -1;
  unsigned short port_ = 0;
  std::filesystem::path log_;
};

}  // namespace kt::bench
