// What the reporting families of kt-bench (gemm, dual-gemm, attention) share around their own
// rows: the loop that runs their jobs one after another under the run's deadline, the writer of
// their report (table.md and the JSON after every job, then the latest copy, the doc's table and
// the table on stdout), and the run itself: re-render --from-json or tune, then publish.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench_run_options.hpp"
#include "bench/job_driver.hpp"
#include "client/kerntune_client.hpp"

namespace kt::bench {

// A family's report as the writer sees it: its names, its JSON and its table.
struct ReportFormat {
  ReportNames names;
  std::function<nlohmann::json()> to_json;
  // The Markdown table; raw_link: the raw-output folder relative to the doc ("" = no link).
  std::function<std::string(const std::string& raw_link)> render_table;
};

// <out_dir>/table.md and <out_dir>/<json_file> of one run.
class ReportWriter {
 public:
  ReportWriter(const BenchRunOptions& options, ReportFormat format);

  // --out-dir when given, else bench/results/<date>-<device>-<report>; the first call decides.
  void settle_out_dir(const std::string& date, const std::string& device);
  const std::filesystem::path& out_dir() const { return out_dir_; }
  // Both files, as the report stands: after every job, so that a run cut short leaves its rows.
  void write() const;
  // At the end: the latest copy and the doc's table (publish_report), the table on stdout.
  void publish(std::ostream& log) const;

 private:
  const BenchRunOptions& options_;
  ReportFormat format_;
  std::filesystem::path out_dir_;
};

// One job of a run: its end, or nothing and a note saying why (the run's deadline had passed,
// the daemon refused the job or could not be reached).
struct JobAttempt {
  std::optional<JobRun> run;
  std::string note;
};

// The jobs of one run, one after another, each cut short where the run's deadline would pass.
class JobLoop {
 public:
  JobLoop(const BenchRunOptions& options, std::ostream& log);

  const kt::Client& client() const { return client_; }
  std::ostream& log() const { return log_; }
  // Seconds since the loop started.
  double elapsed() const;
  // Runs the request with the options' job timeout and deadline, or the ones given (a shape's
  // own timeout, a deadline that keeps time for later work; 0 = none). The note is logged.
  JobAttempt run(const JobRequest& request, const std::string& label) const;
  JobAttempt run(const JobRequest& request, const std::string& label, double job_timeout_seconds,
                 double deadline_seconds) const;

 private:
  const BenchRunOptions& options_;
  std::ostream& log_;
  kt::Client client_;
  std::chrono::steady_clock::time_point start_;
};

// How a reporting family fills its report.
struct ReportingFamily {
  // Replaces the report with one read back from its JSON (--from-json).
  std::function<void(const nlohmann::json&)> load;
  // Tunes every shape; settles the writer's folder and writes after every job.
  std::function<void(ReportWriter&)> tune;
  // Whether the report holds what the run is for (a measured variant, an SDPA comparison).
  std::function<bool()> has_result;
  // The report's date and device, for the default folder of a re-rendered report.
  std::function<std::pair<std::string, std::string>()> date_and_device;
};

// The run: --from-json re-rendered, or the family's tuning; then published. Returns the exit
// code: 1 when the report has no result although the run meant to get one (a re-render or a
// compile-only run does not), else 0.
int run_reporting_family(const BenchRunOptions& options, ReportFormat format,
                         const ReportingFamily& family, std::ostream& log);

}  // namespace kt::bench
