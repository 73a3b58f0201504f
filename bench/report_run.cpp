#include "bench/report_run.hpp"

#include <iostream>
#include <ostream>

#include "bench/bench_session.hpp"
#include "bench/output_files.hpp"
#include "bench/result_names.hpp"

namespace kt::bench {

ReportWriter::ReportWriter(const BenchRunOptions& options, ReportFormat format)
    : options_(options), format_(std::move(format)), out_dir_(options.out_dir) {}

void ReportWriter::settle_out_dir(const std::string& date, const std::string& device) {
  if (!out_dir_.empty()) return;
  out_dir_ = std::filesystem::path("bench/results") /
             results_folder_name(date, device, format_.names.report);
}

void ReportWriter::write() const {
  write_text_file(out_dir_ / format_.names.json_file, format_.to_json().dump(2) + "\n");
  write_text_file(out_dir_ / "table.md", format_.render_table(""));
}

void ReportWriter::publish(std::ostream& log) const {
  publish_report(options_, format_.names, out_dir_, format_.to_json(), format_.render_table, log);
  std::cout << format_.render_table("");
}

JobLoop::JobLoop(const BenchRunOptions& options, std::ostream& log)
    : options_(options),
      log_(log),
      client_(options.server),
      start_(std::chrono::steady_clock::now()) {}

double JobLoop::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

JobAttempt JobLoop::run(const JobRequest& request, const std::string& label) const {
  return run(request, label, options_.job_timeout_seconds, options_.deadline_seconds);
}

JobAttempt JobLoop::run(const JobRequest& request, const std::string& label,
                        double job_timeout_seconds, double deadline_seconds) const {
  JobAttempt attempt;
  const std::optional<WaitOptions> wait =
      wait_for_next_job(options_.poll_ms, job_timeout_seconds, deadline_seconds, elapsed(), log_);
  if (!wait) {
    attempt.note = deadline_passed_note(deadline_seconds);
  } else {
    try {
      attempt.run = run_job(client_, request, label, *wait);
      return attempt;
    } catch (const kt::ClientError& error) {
      attempt.note = "job refused or daemon unreachable: " + std::string(error.what());
    }
  }
  log_ << "[" << label << "] " << attempt.note << std::endl;
  return attempt;
}

int run_reporting_family(const BenchRunOptions& options, ReportFormat format,
                         const ReportingFamily& family, std::ostream& log) {
  ReportWriter writer(options, std::move(format));
  if (!options.from_json.empty()) {
    family.load(nlohmann::json::parse(read_text_file(options.from_json)));
    const auto [date, device] = family.date_and_device();
    writer.settle_out_dir(date, device);
    writer.write();
  } else {
    family.tune(writer);
  }
  writer.publish(log);
  // Nothing measured is a failed run, unless nothing was meant to be (re-render, dry run).
  const bool expect_result = options.from_json.empty() && options.compile_only_arch.empty();
  return family.has_result() || !expect_result ? 0 : 1;
}

}  // namespace kt::bench
