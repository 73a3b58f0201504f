#include "bench/dual_gemm_bench_run.hpp"

#include <algorithm>
#include <ostream>

#include "bench/bench_session.hpp"
#include "bench/doc_section.hpp"
#include "bench/job_figures.hpp"
#include "bench/report_fields.hpp"
#include "bench/report_run.hpp"
#include "bench/result_names.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

const ReportNames kDualGemmReportNames{
    "dual-gemm", "dual-gemm.json", kDualGemmTableBegin, kDualGemmTableEnd, "", ""};

std::string figures_line(const DualGemmRow& row) {
  return "ours " + format_us(row.ours_us) + ", unfused " + format_us(row.unfused_us) + ", ratio " +
         ratio_interval_cell(row.ratio, row.ratio_low, row.ratio_high);
}

void tune_all_shapes(const DualGemmBenchOptions& options, DualGemmReport& report,
                     ReportWriter& writer, std::ostream& log) {
  const JobLoop jobs(options, log);
  report.date = utc_date();
  if (const auto copy =
          copy_bandwidth_for_run(options.copy_gbps, options.copy_json, options.device, log)) {
    report.copy_gbps = copy->gbps;
    report.device = copy->device;
    report.driver = copy->driver;
  }
  const DaemonDevice device = daemon_device(jobs.client());
  if (report.device.empty()) report.device = device.name;
  if (report.driver.empty()) report.driver = device.driver;
  writer.settle_out_dir(report.date, report.device);

  for (const DualGemmShape& shape : options.shapes) {
    const std::string label = "dual_gemm_silu " + dual_shape_label(shape);
    JobRequest request;
    request.family = "dual_gemm_silu";
    request.dims = {{"G", shape.g}, {"M", shape.m}, {"N", shape.n}, {"K", shape.k}};
    request.dtype = options.dtype;
    request.device = options.device;
    request.budget = shape.budget >= 0 ? shape.budget : options.budget;
    request.arch = options.compile_only_arch;
    const JobAttempt attempt = jobs.run(request, label);
    DualGemmRow row;
    row.shape = shape;
    row.dtype = options.dtype;
    row.note = attempt.note;
    if (attempt.run) {
      row = dual_gemm_row_from_job(shape, options.dtype, *attempt.run);
      if (report.device.empty())
        report.device = attempt.run->job.value("device_name", std::string());
      if (options.compile_only_arch.empty())
        log << "[" << label << "] " << figures_line(row) << std::endl;
    }
    report.rows.push_back(std::move(row));
    writer.write();
  }
}

}  // namespace

void add_dual_gemm_bench_options(CLI::App& app, DualGemmBenchOptions& options) {
  app.description(
      "Tunes grouped dual GEMM + SiLU shapes (family dual_gemm_silu) through a running kerntuned, "
      "one job per shape, and writes each job's final comparison: our best variant next to the "
      "unfused baseline (two cuBLASLt GEMMs per group and the SiLU-multiply kernel) re-measured "
      "interleaved in the same job, with the ratio's 95% interval: <out-dir>/table.md and "
      "dual-gemm.json, a copy of the JSON at --latest, and optionally the table of --doc.");
  add_bench_run_options(app, options, kDualGemmReportNames);
  app.add_option("--shape", options.shape_texts,
                 "GxMxNxK or GxMxNxK:BUDGET, repeatable (default: the 8 default shapes)");
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
  if (options.shape_texts.empty()) options.shapes = default_dual_gemm_shapes();
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
  ReportFormat format{
      kDualGemmReportNames, [&report] { return dual_gemm_report_to_json(report); },
      [&report](const std::string& raw) { return render_dual_gemm_table(report, raw); }};
  ReportingFamily family;
  family.load = [&report](const nlohmann::json& j) { report = dual_gemm_report_from_json(j); };
  family.tune = [&](ReportWriter& writer) { tune_all_shapes(options, report, writer, log); };
  family.has_result = [&report] {
    return std::any_of(report.rows.begin(), report.rows.end(),
                       [](const DualGemmRow& row) { return row.ours_us.has_value(); });
  };
  family.date_and_device = [&report] { return std::make_pair(report.date, report.device); };
  return run_reporting_family(options, std::move(format), family, log);
}

}  // namespace kt::bench
