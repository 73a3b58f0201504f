// The `kerntune submit --wait` progress display on stderr:
//   [#####.....] 37/120 variants  measured 30  failed 7  best 812.4 us
// redrawn in place on a terminal, a line every few seconds otherwise (logs, CI).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace kt {

struct ProgressSnapshot {
  std::string status;  // the job's status
  std::string mode = "tune";
  // Variants that go through the gates: pruned and unsupported_arch ones (often most of the
  // space) are finished before anything runs, so they are left out of the bar.
  std::int64_t total = 0;
  std::int64_t finished = 0;
  std::int64_t pruned = 0;     // pruned + unsupported_arch
  std::int64_t succeeded = 0;  // measured (tune) or compiled (compile)
  std::int64_t failed = 0;     // compile_error, resource_exceeded, launch_failed, ... wrong_result
  std::optional<double> best_us;
};

// From GET /v1/jobs/{id}.
ProgressSnapshot snapshot_from_job(const nlohmann::json& job);
// One line, no newline: "[#####.....] 37/120 variants  measured 30  failed 7  best 812.4 us".
std::string render_progress(const ProgressSnapshot& snapshot, int bar_width = 20);

class ProgressDisplay {
 public:
  ProgressDisplay(std::ostream& out, bool interactive,
                  std::chrono::seconds line_interval = std::chrono::seconds(5));
  // Redraws (terminal) or prints a line if the interval passed or the status changed.
  void update(const ProgressSnapshot& snapshot);
  // Leaves the last state on screen and ends the line.
  void finish(const ProgressSnapshot& snapshot);

 private:
  std::ostream& out_;
  bool interactive_;
  std::chrono::seconds line_interval_;
  std::chrono::steady_clock::time_point last_line_{};
  std::string last_status_;
  bool printed_ = false;
};

}  // namespace kt
