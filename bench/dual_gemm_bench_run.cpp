#include "bench/dual_gemm_bench_run.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <ostream>

#include "bench/bench_session.hpp"
#include "bench/job_figures.hpp"
#include "bench/output_files.hpp"
#include "bench/readme_section.hpp"
#include "bench/report_fields.hpp"
#include "bench/result_names.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

const ReportNames kDualGemmReportNames{
    "dual-gemm", "dual-gemm.json", kDualGemmTableBegin, kDualGemmTableEnd, "", ""};

using Clock = std::chrono::steady_clock;

void write_outputs(const DualGemmReport& report, const std::filesystem::path& out_dir) {
  write_text_file(out_dir / "dual-gemm.json", dual_gemm_report_to_json(report).dump(2) + "\n");
  write_text_file(out_dir / "table.md", render_dual_gemm_table(report));
}

std::filesystem::path default_out_dir(const DualGemmReport& report) {
  return std::filesystem::path("bench/results") /
         results_folder_name(report.date, report.device, "dual-gemm");
}

std::string figures_line(const DualGemmRow& row) {
  return "ours " + format_us(row.ours_us) + ", unfused " + format_us(row.unfused_us) + ", ratio " +
         ratio_interval_cell(row.ratio, row.ratio_low, row.ratio_high);
}

DualGemmReport tune_all_shapes(const DualGemmBenchOptions& options, std::ostream& log,
                               std::filesystem::path& out_dir) {
  const auto start = Clock::now();
  const kt::Client client(options.server);
  DualGemmReport report;
  report.date = utc_date();
  std::optional<CopyBandwidthInfo> copy;
  if (options.copy_gbps > 0)
    copy = CopyBandwidthInfo{options.copy_gbps, "", ""};
  else if (!options.copy_json.empty())
    copy = copy_bandwidth_from_json(nlohmann::json::parse(read_text_file(options.copy_json)));
  else
    copy = run_copy_bandwidth_program(options.device, log);
  if (copy) {
    report.copy_gbps = copy->gbps;
    report.device = copy->device;
    report.driver = copy->driver;
  }
  const DaemonDevice device = daemon_device(client);
  if (report.device.empty()) report.device = device.name;
  if (report.driver.empty()) report.driver = device.driver;
  if (out_dir.empty()) out_dir = default_out_dir(report);

  for (const DualGemmShape& shape : options.shapes) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string label = "dual_gemm_silu " + dual_shape_label(shape);
    DualGemmRow row;
    row.shape = shape;
    row.dtype = options.dtype;
    const auto wait = wait_for_next_job(options.poll_ms, options.job_timeout_seconds,
                                        options.deadline_seconds, elapsed, log);
    if (!wait) {
      row.note = deadline_passed_note(options.deadline_seconds);
      log << "[" << label << "] " << row.note << std::endl;
    } else {
      JobRequest request;
      request.family = "dual_gemm_silu";
      request.dims = {{"G", shape.g}, {"M", shape.m}, {"N", shape.n}, {"K", shape.k}};
      request.dtype = options.dtype;
      request.device = options.device;
      request.budget = shape.budget >= 0 ? shape.budget : options.budget;
      request.arch = options.compile_only_arch;
      try {
        const JobRun run = run_job(client, request, label, *wait);
        row = dual_gemm_row_from_job(shape, options.dtype, run);
        if (report.device.empty()) report.device = run.job.value("device_name", std::string());
        if (options.compile_only_arch.empty())
          log << "[" << label << "] " << figures_line(row) << std::endl;
      } catch (const kt::ClientError& error) {
        row.note = "job refused or daemon unreachable: " + std::string(error.what());
        log << "[" << label << "] " << row.note << std::endl;
      }
    }
    report.rows.push_back(std::move(row));
    write_outputs(report, out_dir);  // after every shape: a run cut short still leaves its rows
  }
  return report;
}

}  // namespace

void add_dual_gemm_bench_options(CLI::App& app, DualGemmBenchOptions& options) {
  app.description(
      "Tunes grouped dual GEMM + SiLU shapes (family dual_gemm_silu) through a running kerntuned, "
      "one job per shape, and writes each job's final comparison: our best variant next to the "
      "unfused baseline (two cuBLASLt GEMMs per group and the SiLU-multiply kernel) re-measured "
      "interleaved in the same job, with the ratio's 95% interval: <out-dir>/table.md and "
      "dual-gemm.json, a copy of the JSON at --latest, and optionally the README's table.");
  add_bench_run_options(app, options, kDualGemmReportNames);
  app.add_option("--shape", options.shape_texts,
                 "GxMxNxK or GxMxNxK:BUDGET, repeatable (default: the issue-13 shapes)");
  app.add_option("--dtype", options.dtype, "element type (bf16, fp16)")->capture_default_str();
  app.add_option("--copy-json", options.copy_json,
                 "read the copy bandwidth from this kt-copy-bandwidth output instead of running it")
      ->check(CLI::ExistingFile);
  app.add_option("--copy-gbps", options.copy_gbps, "use this copy bandwidth (GB/s)")
      ->check(CLI::PositiveNumber);
  app.get_option("--copy-json")->excludes("--copy-gbps");
  app.get_option("--from-json")
      ->excludes("--shape")
      ->excludes("--copy-json")
      ->excludes("--copy-gbps");
}

void finish_dual_gemm_bench_options(DualGemmBenchOptions& options) {
  options.shapes.clear();
  if (options.shape_texts.empty()) options.shapes = issue13_shapes();
  for (const std::string& text : options.shape_texts)
    options.shapes.push_back(parse_dual_shape_label(text));
  if (options.dtype.empty()) throw std::invalid_argument("--dtype must not be empty");
}

DualGemmRow dual_gemm_row_from_job(const DualGemmShape& shape, const std::string& dtype,
                                   const JobRun& run) {
  const JobFigures figures = job_figures(run, /*expect_baseline=*/true);
  DualGemmRow row;
  row.shape = shape;
  row.dtype = dtype;
  row.config = figures.config;
  row.ours_us = figures.ours_us;
  row.first_pass_us = figures.first_pass_us;
  row.unfused_us = figures.baseline_us;
  row.ratio = figures.ratio;
  row.ratio_low = figures.ratio_low;
  row.ratio_high = figures.ratio_high;
  row.baseline = figures.baseline;
  row.variants_measured = figures.variants_measured;
  row.tuning_seconds = figures.tuning_seconds;
  row.job_id = run.job.value("id", std::int64_t{0});
  row.note = figures.note;
  return row;
}

int run_dual_gemm_bench(const DualGemmBenchOptions& options, std::ostream& log) {
  DualGemmReport report;
  std::filesystem::path out_dir = options.out_dir;
  if (!options.from_json.empty()) {
    report = dual_gemm_report_from_json(nlohmann::json::parse(read_text_file(options.from_json)));
    if (out_dir.empty()) out_dir = default_out_dir(report);
    write_outputs(report, out_dir);
  } else {
    report = tune_all_shapes(options, log, out_dir);
  }
  publish_report(
      options, kDualGemmReportNames, out_dir, dual_gemm_report_to_json(report),
      [&report](const std::string& raw) { return render_dual_gemm_table(report, raw); }, log);
  std::cout << render_dual_gemm_table(report);
  const bool any_measured =
      std::any_of(report.rows.begin(), report.rows.end(),
                  [](const DualGemmRow& row) { return row.ours_us.has_value(); });
  const bool expect_measured = options.from_json.empty() && options.compile_only_arch.empty();
  return any_measured || !expect_measured ? 0 : 1;
}

}  // namespace kt::bench
