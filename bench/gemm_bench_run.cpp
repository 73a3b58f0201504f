#include "bench/gemm_bench_run.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <stdexcept>

#include "bench/doc_section.hpp"
#include "bench/report_run.hpp"
#include "bench/result_names.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

const ReportNames kGemmReportNames{
    "gemm",
    "gemm.json",
    kGemmTableBegin,
    kGemmTableEnd,
    "",
    "a shape's own timeout (MxNxK:BUDGET:TIMEOUT_S, --shape-set) takes precedence"};

// The fp8 runs' own folder, JSON and document table per scaling mode.
ReportNames report_names(const GemmBenchOptions& options) {
  if (options.fp8_scaling.empty()) return kGemmReportNames;
  ReportNames names = kGemmReportNames;
  names.report = "gemm-fp8-" + options.fp8_scaling;
  names.json_file = "gemm_fp8.json";
  names.table_begin = "<!-- gemm-fp8-" + options.fp8_scaling + "-table:begin -->";
  names.table_end = "<!-- gemm-fp8-" + options.fp8_scaling + "-table:end -->";
  return names;
}

std::string device_of_job(const nlohmann::json& job) {
  return job.contains("device_name") && job.at("device_name").is_string()
             ? job.at("device_name").get<std::string>()
             : "";
}

std::int64_t job_id_of(const nlohmann::json& job) {
  return job.contains("id") && job.at("id").is_number_integer() ? job.at("id").get<std::int64_t>()
                                                                : 0;
}

// "final: ours 180.1 us, baseline 179.0 us, ratio 0.99× [0.98, 1.00], answer: baseline" for the
// log.
std::string figures_line(const GemmRow& row) {
  const GemmFigures figures = gemm_figures(row, std::nullopt);
  const std::string answer = gemm_answer_name(gemm_answer(row, figures));
  return std::string(figures.ratio_low ? "final" : "first pass") + ": ours " +
         format_us(row.ours_us) + ", baseline " + format_us(row.baseline_us) + ", ratio " +
         ratio_cell(figures) + ", answer: " + (answer.empty() ? "none" : answer);
}

// A job of the shape: its own job timeout (else the run's), under the run's deadline.
JobAttempt run_shape_job(const GemmBenchOptions& options, const JobLoop& jobs,
                         const JobRequest& request, const std::string& label) {
  const double timeout = request.shape.timeout_seconds > 0 ? request.shape.timeout_seconds
                                                           : options.job_timeout_seconds;
  return jobs.run(request, label, timeout, options.deadline_seconds);
}

// The configs of a job's final-comparison candidates, for its repeats; the winner alone when the
// variants listing cannot be read.
std::vector<nlohmann::json> candidates_to_repeat(const kt::Client& client, const JobRun& run,
                                                 const std::string& label, std::ostream& log) {
  std::vector<nlohmann::json> variants;
  try {
    variants = job_variants(client, job_id_of(run.job));
  } catch (const kt::ClientError& error) {
    log << "[" << label << "] cannot list the job's variants (" << error.what()
        << "): repeats pin the winner only" << std::endl;
  }
  return final_candidate_configs(run.job, variants);
}

// Repeats 2..N: for each shape, a job pinned to the first run's candidates, so its final
// comparison runs again in a freshly started worker process.
void repeat_final_comparisons(const GemmBenchOptions& options, const JobLoop& jobs,
                              const std::vector<std::vector<nlohmann::json>>& pinned,
                              GemmReport& report, const ReportWriter& writer, std::ostream& log) {
  for (int repeat = 2; repeat <= options.repeat; ++repeat) {
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      if (pinned[i].empty()) continue;  // the first run gave nothing to repeat
      GemmRow& row = report.rows[i];
      const std::string label = "gemm " + shape_label(row.shape) + " repeat " +
                                std::to_string(repeat) + "/" + std::to_string(options.repeat);
      JobRequest request = gemm_shape_request(options, row.shape);
      request.configs = pinned[i];
      if (options.deadline_seconds <= 0 || jobs.elapsed() < options.deadline_seconds)
        log << "[" << label << "] pinned job with " << pinned[i].size()
            << " config(s): the first run's final-comparison candidates" << std::endl;
      const JobAttempt attempt = run_shape_job(options, jobs, request, label);
      GemmRepeat result;
      result.note = attempt.note;
      if (attempt.run) {
        const GemmRow repeat_row = gemm_row_from_job(row.shape, options.dtype, *attempt.run);
        result = gemm_repeat_from_row(repeat_row, job_id_of(attempt.run->job));
        log << "[" << label << "] " << figures_line(repeat_row) << std::endl;
      }
      row.repeats.push_back(std::move(result));
      writer.write();
    }
  }
  for (const GemmRow& row : report.rows)
    if (const auto spread = ratio_spread(row.repeats))
      log << "[gemm " << shape_label(row.shape) << "] ratio over " << spread->runs
          << " runs: " << format_fixed(spread->min, 3) << "–" << format_fixed(spread->max, 3)
          << "×, spread " << format_percent(spread->spread) << std::endl;
}

void tune_all_shapes(const GemmBenchOptions& options, GemmReport& report, ReportWriter& writer,
                     std::ostream& log) {
  const JobLoop jobs(options, log);
  report.date = utc_date();
  if (const auto copy =
          copy_bandwidth_for_run(options.copy_gbps, options.copy_json, options.device, log)) {
    report.copy_gbps = copy->gbps;
    report.device = copy->device;
    report.driver = copy->driver;
  }
  // The daemon's view of the GPU the jobs run on: name and driver (CUDA driver version).
  const DaemonDevice device = daemon_device(jobs.client());
  if (report.device.empty()) report.device = device.name;
  if (report.driver.empty()) report.driver = device.driver;
  writer.settle_out_dir(report.date, report.device);

  // Compile-only jobs time nothing, so there is no final comparison to repeat.
  const bool repeats_wanted = options.repeat > 1 && options.compile_only_arch.empty();
  if (options.repeat > 1 && !repeats_wanted)
    log << "--repeat " << options.repeat << " ignored: compile-only jobs time nothing" << std::endl;
  std::vector<std::vector<nlohmann::json>> pinned;  // per row: the configs its repeats pin
  for (const GemmShape& shape : options.shapes) {
    const std::string label = "gemm " + shape_label(shape);
    JobRequest request = gemm_shape_request(options, shape);
    request.budget = shape.budget >= 0 ? shape.budget : options.budget;
    request.arch = options.compile_only_arch;
    const JobAttempt attempt = run_shape_job(options, jobs, request, label);
    GemmRow row;
    row.shape = shape;
    row.dtype = options.dtype;
    row.note = attempt.note;
    std::vector<nlohmann::json> to_repeat;
    if (attempt.run) {
      const JobRun& run = *attempt.run;
      row = gemm_row_from_job(shape, options.dtype, run);
      if (report.device.empty()) report.device = device_of_job(run.job);
      if (options.compile_only_arch.empty()) {
        log << "[" << label << "] " << figures_line(row)
            << (row.ours_us ? "" : " (no variant measured)") << std::endl;
        row.repeats.push_back(gemm_repeat_from_row(row, job_id_of(run.job)));
      }
      if (repeats_wanted && row.ours_us)
        to_repeat = candidates_to_repeat(jobs.client(), run, label, log);
    }
    report.rows.push_back(std::move(row));
    pinned.push_back(std::move(to_repeat));
    writer.write();
  }
  if (repeats_wanted) repeat_final_comparisons(options, jobs, pinned, report, writer, log);
}

}  // namespace

void add_gemm_bench_options(CLI::App& app, GemmBenchOptions& options) {
  app.description(
      "Tunes bf16 GEMM shapes through a running kerntuned (one job per shape) and writes the "
      "job's final comparison: our best variant next to the baseline (cublasLt, best of its "
      "heuristic's top algorithms), re-measured interleaved in the same job on the same GPU, "
      "with the ratio's 95% interval: <out-dir>/table.md and gemm.json, a copy of the JSON at "
      "--latest, and optionally the table of --doc.");
  add_bench_run_options(app, options, kGemmReportNames);
  app.add_option("--shape", options.shape_texts,
                 "MxNxK, MxNxK:BUDGET or MxNxK:BUDGET:TIMEOUT_S, repeatable (default: the "
                 "square set at --budget)");
  app.add_option("--shape-set", options.shape_set,
                 "a named set, each shape with its own budget and job timeout: square (2048^3 to "
                 "8192^3 and the skinny Mx4096x7168, nine), models (ten real-model shapes) or "
                 "all (both)")
      ->check(CLI::IsMember(gemm_shape_set_names()));
  app.add_option("--dtype", options.dtype, "element type (with --fp8-scaling: A's, e4m3 or e5m2)")
      ->capture_default_str();
  app.add_option("--fp8-scaling", options.fp8_scaling,
                 "tune the fp8 GEMM family (gemm_fp8: fp8 A and B, bf16 C) with per-tensor "
                 "(tensor) or 1x128 / 128x128 block (block) scales instead; --dtype defaults to "
                 "e4m3, the shapes to --shape-set fp8, the report to its own folder and table")
      ->check(CLI::IsMember({"tensor", "block"}));
  app.add_option("--copy-json", options.copy_json,
                 "read the copy bandwidth from this kt-copy-bandwidth output instead of running it")
      ->check(CLI::ExistingFile);
  app.add_option("--copy-gbps", options.copy_gbps, "use this copy bandwidth (GB/s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", options.repeat,
                 "final comparisons per shape: the tuning job's, then N-1 jobs pinned to its "
                 "final-comparison candidates (each compared in a freshly started worker); the "
                 "report adds the ratio's run-to-run spread")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.get_option("--copy-json")->excludes("--copy-gbps");
  app.get_option("--shape-set")->excludes("--shape");
  app.get_option("--from-json")
      ->excludes("--shape")
      ->excludes("--shape-set")
      ->excludes("--repeat")
      ->excludes("--copy-json")
      ->excludes("--copy-gbps");
}

void finish_gemm_bench_options(GemmBenchOptions& options) {
  options.shapes.clear();
  if (!options.shape_set.empty() && !options.shape_texts.empty())
    throw std::invalid_argument("--shape-set and --shape cannot be combined");
  const bool fp8 = !options.fp8_scaling.empty();
  if (fp8 && options.dtype == "bf16") options.dtype = "e4m3";
  if (fp8 && options.latest == "bench/results/gemm-latest.json")
    options.latest = "bench/results/gemm-fp8-" + options.fp8_scaling + "-latest.json";
  if (!options.shape_set.empty()) {
    options.shapes = gemm_shape_set(options.shape_set);
  } else if (options.shape_texts.empty()) {
    options.shapes = fp8 ? fp8_shapes() : square_set_shapes();
  } else {
    for (const std::string& text : options.shape_texts)
      options.shapes.push_back(parse_shape_label(text));
  }
  if (options.dtype.empty()) throw std::invalid_argument("--dtype must not be empty");
  if (options.repeat < 1) throw std::invalid_argument("--repeat must be at least 1");
}

JobRequest gemm_shape_request(const GemmBenchOptions& options, const GemmShape& shape) {
  JobRequest request;
  request.shape = shape;
  request.dtype = options.dtype;
  request.device = options.device;
  if (!options.fp8_scaling.empty()) {
    request.family = "gemm_fp8";
    request.dims = {{"M", shape.m},
                    {"N", shape.n},
                    {"K", shape.k},
                    {"BLOCK_SCALED", options.fp8_scaling == "block" ? 1 : 0}};
  }
  return request;
}

namespace {

std::optional<double> number_field(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j.at(field).is_number()) return std::nullopt;
  return j.at(field).get<double>();
}

}  // namespace

GemmRow gemm_row_from_job(const GemmShape& shape, const std::string& dtype, const JobRun& run) {
  GemmRow row;
  row.shape = shape;
  row.dtype = dtype;
  row.tuning_seconds = run.seconds;
  const nlohmann::json& job = run.job;
  const JobCounts counts = job_counts(job);
  row.variants_measured = counts.measured;
  const nlohmann::json best = job.value("best", nlohmann::json());
  if (const auto first_pass = number_field(best, "median_us")) {
    row.first_pass_us = first_pass;
    row.config = pinned_config(best);
  }
  // The job's result is its final comparison; a figure from it is used only with its baseline
  // and interval, so ours and the baseline always come from the same samples.
  const nlohmann::json final =
      best.is_object() ? best.value("final", nlohmann::json()) : nlohmann::json();
  const auto final_us = number_field(final, "median_us");
  const auto final_baseline_us = number_field(final, "baseline_median_us");
  const auto speedup = number_field(final, "speedup");
  const auto speedup_low = number_field(final, "speedup_low");
  const auto speedup_high = number_field(final, "speedup_high");
  const bool from_final =
      final_us && final_baseline_us && speedup && speedup_low && speedup_high && row.first_pass_us;
  if (from_final) {
    row.ours_us = final_us;
    row.baseline_us = final_baseline_us;
    row.ratio = speedup;
    row.ratio_low = speedup_low;
    row.ratio_high = speedup_high;
    const nlohmann::json baseline = final.value("baseline", nlohmann::json());
    if (baseline.is_object()) row.baseline = baseline;
  } else {
    row.ours_us = row.first_pass_us;
    row.baseline_us = number_field(job, "reference_us");
    // What the first pass timed (the first GPU's baseline), e.g. alone when no variant ran.
    const nlohmann::json baselines = job.value("baselines", nlohmann::json());
    if (baselines.is_object())
      for (const auto& [gpu, entry] : baselines.items())
        if (entry.is_object() && entry.contains("baseline") && entry.at("baseline").is_object()) {
          row.baseline = entry.at("baseline");
          break;
        }
  }
  std::vector<std::string> notes;
  const std::string status = job.value("status", std::string("?"));
  if (run.cut_short) {
    notes.push_back("cut short after " + format_fixed(run.seconds, 0) +
                    " s (time limit): " + std::to_string(counts.finished) + " of " +
                    std::to_string(counts.to_run) + " variants ran");
  } else if (status != "done") {
    const std::string reason = job.contains("reason") && job.at("reason").is_string()
                                   ? ": " + job.at("reason").get<std::string>()
                                   : "";
    notes.push_back("job " + status + reason);
  }
  if (!row.ours_us)
    notes.push_back(row.baseline_us ? "no variant measured: the baseline is the answer"
                                    : "no variant measured");
  else if (!from_final)
    notes.push_back(final.is_object()
                        ? "final comparison without the baseline: first-pass figures, no interval"
                        : "no final comparison: first-pass figures, no interval");
  if (!row.baseline_us) notes.push_back("no baseline time");
  for (const std::string& note : notes) row.note += (row.note.empty() ? "" : "; ") + note;
  return row;
}

GemmRepeat gemm_repeat_from_row(const GemmRow& row, std::int64_t job_id) {
  const GemmFigures figures = gemm_figures(row, std::nullopt);
  GemmRepeat repeat;
  repeat.job_id = job_id;
  repeat.ours_us = row.ours_us;
  repeat.baseline_us = row.baseline_us;
  repeat.ratio = figures.ratio;
  repeat.ratio_low = figures.ratio_low;
  repeat.ratio_high = figures.ratio_high;
  repeat.config = row.config;
  repeat.note = row.note;
  return repeat;
}

std::vector<nlohmann::json> final_candidate_configs(const nlohmann::json& job,
                                                    const std::vector<nlohmann::json>& variants) {
  std::vector<nlohmann::json> configs;
  const nlohmann::json best = job.value("best", nlohmann::json());
  if (best.is_object() && best.contains("template")) configs.push_back(pinned_config(best));
  const nlohmann::json comparison = job.value("comparison", nlohmann::json());
  const nlohmann::json final =
      comparison.is_object() ? comparison.value("final", nlohmann::json()) : nlohmann::json();
  const nlohmann::json ids =
      final.is_object() ? final.value("variant_ids", nlohmann::json()) : nlohmann::json();
  if (!ids.is_array()) return configs;
  for (const nlohmann::json& id : ids) {
    const auto variant = std::find_if(variants.begin(), variants.end(), [&](const auto& v) {
      return v.is_object() && v.contains("id") && v.at("id") == id;
    });
    if (variant == variants.end()) continue;
    nlohmann::json config = pinned_config(*variant);
    if (std::find(configs.begin(), configs.end(), config) == configs.end())
      configs.push_back(std::move(config));
  }
  return configs;
}

int run_gemm_bench(const GemmBenchOptions& options, std::ostream& log) {
  GemmReport report;
  report.scaling = options.fp8_scaling;
  ReportFormat format{report_names(options), [&report] { return gemm_report_to_json(report); },
                      [&report](const std::string& raw) { return render_gemm_table(report, raw); }};
  ReportingFamily family;
  family.load = [&report](const nlohmann::json& j) { report = gemm_report_from_json(j); };
  family.tune = [&](ReportWriter& writer) { tune_all_shapes(options, report, writer, log); };
  family.has_result = [&report] {
    return std::any_of(report.rows.begin(), report.rows.end(),
                       [](const GemmRow& row) { return row.ours_us.has_value(); });
  };
  family.date_and_device = [&report] { return std::make_pair(report.date, report.device); };
  return run_reporting_family(options, std::move(format), family, log);
}

}  // namespace kt::bench
