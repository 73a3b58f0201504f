#include "client/progress_bar.hpp"

#include <algorithm>
#include <set>

#include "client/text_format.hpp"

namespace kt {
namespace {

const std::set<std::string> kFailedStatuses{
    "compile_error", "resource_exceeded", "launch_failed", "illegal_access",
    "hang",          "crashed",           "wrong_result"};

std::int64_t count_of(const nlohmann::json& by_status, const std::string& status) {
  return by_status.is_object() && by_status.contains(status) ? by_status[status].get<std::int64_t>()
                                                             : 0;
}

}  // namespace

ProgressSnapshot snapshot_from_job(const nlohmann::json& job) {
  ProgressSnapshot snapshot;
  snapshot.status = job.value("status", "");
  snapshot.mode = job.value("mode", "tune");
  if (job.contains("progress") && job["progress"].is_object()) {
    const nlohmann::json& progress = job["progress"];
    const nlohmann::json by_status = progress.value("by_status", nlohmann::json::object());
    snapshot.pruned = count_of(by_status, "pruned") + count_of(by_status, "unsupported_arch");
    snapshot.total = progress.value("total", std::int64_t{0}) - snapshot.pruned;
    snapshot.finished = progress.value("finished", std::int64_t{0}) - snapshot.pruned;
    snapshot.succeeded = count_of(by_status, snapshot.mode == "compile" ? "compiled" : "measured");
    for (const auto& status : kFailedStatuses) snapshot.failed += count_of(by_status, status);
  }
  if (job.contains("best") && job["best"].is_object() && job["best"].contains("median_us") &&
      job["best"]["median_us"].is_number())
    snapshot.best_us = job["best"]["median_us"].get<double>();
  return snapshot;
}

std::string render_progress(const ProgressSnapshot& s, int bar_width) {
  // Before the runner has planned the space there is nothing to count yet.
  if (s.total <= 0 && (s.status == "queued" || s.status == "running"))
    return "[" + std::string(bar_width, '.') + "] planning the variant space (" + s.status + ")";
  const double fraction =
      s.total > 0 ? std::clamp(static_cast<double>(s.finished) / s.total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * bar_width + 0.5);
  std::string line = "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "] ";
  line += std::to_string(s.finished) + "/" + std::to_string(s.total) + " variants  ";
  line += (s.mode == "compile" ? "compiled " : "measured ") + std::to_string(s.succeeded);
  line += "  failed " + std::to_string(s.failed);
  if (s.best_us) line += "  best " + format_us(*s.best_us);
  if (!s.status.empty() && s.status != "running") line += "  (" + s.status + ")";
  return line;
}

ProgressDisplay::ProgressDisplay(std::ostream& out, bool interactive,
                                 std::chrono::seconds line_interval)
    : out_(out), interactive_(interactive), line_interval_(line_interval) {}

void ProgressDisplay::update(const ProgressSnapshot& snapshot) {
  const std::string line = render_progress(snapshot);
  if (interactive_) {
    out_ << '\r' << line << "\x1b[K" << std::flush;  // erase what a longer line left behind
    printed_ = true;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (printed_ && snapshot.status == last_status_ && now - last_line_ < line_interval_) return;
  out_ << line << '\n' << std::flush;
  last_line_ = now;
  last_status_ = snapshot.status;
  printed_ = true;
}

void ProgressDisplay::finish(const ProgressSnapshot& snapshot) {
  if (interactive_) {
    out_ << '\r' << render_progress(snapshot) << "\x1b[K\n" << std::flush;
  } else {
    out_ << render_progress(snapshot) << '\n' << std::flush;
  }
  printed_ = false;
}

}  // namespace kt
