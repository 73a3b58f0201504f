#include "bench/gemm_bench_run.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <stdexcept>

#include "bench/output_files.hpp"
#include "bench/readme_section.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

using Clock = std::chrono::steady_clock;

// kt-copy-bandwidth next to this program, run on the GPU the jobs use when that is an ordinal.
std::optional<CopyBandwidthInfo> measure_copy_bandwidth(const std::string& device,
                                                        std::ostream& log) {
  std::string command = (program_dir() / "kt-copy-bandwidth").string();
  if (!device.empty() && device.find_first_not_of("0123456789") == std::string::npos)
    command += " --device " + device;
  log << "copy bandwidth: running " << command << std::endl;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    log << "copy bandwidth: cannot start " << command << std::endl;
    return std::nullopt;
  }
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  try {
    if (status != 0) throw std::runtime_error("exit status " + std::to_string(status));
    return copy_bandwidth_from_json(nlohmann::json::parse(output));
  } catch (const std::exception& error) {
    log << "copy bandwidth: not measured (" << error.what() << "): " << output << std::endl;
    return std::nullopt;
  }
}

std::string device_of_job(const nlohmann::json& job) {
  return job.contains("device_name") && job.at("device_name").is_string()
             ? job.at("device_name").get<std::string>()
             : "";
}

// The daemon's view of the GPU the jobs run on: name and driver (CUDA driver version).
void fill_device_from_daemon(const kt::Client& client, GemmReport& report) {
  const nlohmann::json answer = client.devices();
  const nlohmann::json devices = answer.value("devices", nlohmann::json::array());
  if (devices.empty()) return;
  if (report.device.empty()) report.device = devices.front().value("name", std::string());
  if (report.driver.empty() && devices.front().contains("driver_version"))
    report.driver = "CUDA driver " + devices.front().at("driver_version").dump();
}

void write_outputs(const GemmReport& report, const std::filesystem::path& out_dir) {
  write_text_file(out_dir / "gemm.json", gemm_report_to_json(report).dump(2) + "\n");
  write_text_file(out_dir / "table.md", render_gemm_table(report));
}

std::filesystem::path default_out_dir(const GemmReport& report) {
  return std::filesystem::path("bench/results") /
         results_folder_name(report.date, report.device, "gemm");
}

GemmReport tune_all_shapes(const GemmBenchOptions& options, std::ostream& log,
                           std::filesystem::path& out_dir) {
  const auto start = Clock::now();
  const kt::Client client(options.server);
  GemmReport report;
  report.date = utc_date();

  std::optional<CopyBandwidthInfo> copy;
  if (options.copy_gbps > 0) {
    copy = CopyBandwidthInfo{options.copy_gbps, "", ""};
  } else if (!options.copy_json.empty()) {
    copy = copy_bandwidth_from_json(nlohmann::json::parse(read_text_file(options.copy_json)));
  } else {
    copy = measure_copy_bandwidth(options.device, log);
  }
  if (copy) {
    report.copy_gbps = copy->gbps;
    report.device = copy->device;
    report.driver = copy->driver;
    log << "copy bandwidth: " << format_fixed(copy->gbps, 0) << " GB/s" << std::endl;
  }
  fill_device_from_daemon(client, report);
  if (out_dir.empty()) out_dir = default_out_dir(report);

  for (const GemmShape& shape : options.shapes) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    GemmRow row;
    row.shape = shape;
    row.dtype = options.dtype;
    const std::string label = "gemm " + shape_label(shape);
    if (options.deadline_seconds > 0 && elapsed >= options.deadline_seconds) {
      row.note = "skipped: the run's time limit (" + format_fixed(options.deadline_seconds, 0) +
                 " s) had passed";
      log << "[" << label << "] " << row.note << std::endl;
    } else {
      JobRequest request;
      request.shape = shape;
      request.dtype = options.dtype;
      request.device = options.device;
      request.budget = shape.budget >= 0 ? shape.budget : options.budget;
      request.arch = options.compile_only_arch;
      WaitOptions wait;
      wait.poll = std::chrono::milliseconds(options.poll_ms);
      wait.progress = &log;
      wait.timeout_seconds = options.job_timeout_seconds;
      if (options.deadline_seconds > 0) {
        const double left = options.deadline_seconds - elapsed;
        if (wait.timeout_seconds <= 0 || left < wait.timeout_seconds) wait.timeout_seconds = left;
      }
      try {
        const JobRun run = run_job(client, request, label, wait);
        row = gemm_row_from_job(shape, options.dtype, run);
        if (report.device.empty()) report.device = device_of_job(run.job);
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

void add_gemm_bench_options(CLI::App& app, GemmBenchOptions& options) {
  app.description(
      "Tunes bf16 GEMM shapes through a running kerntuned (one job per shape) and writes our best "
      "variant next to cuBLAS timed in the same job: <out-dir>/table.md and gemm.json, a copy of "
      "the JSON at --latest, and optionally the README's table.");
  app.add_option("--server", options.server, "kerntuned URL")->capture_default_str();
  app.add_option("--budget", options.budget,
                 "variants per shape through compile/measure (0 = all that survive the "
                 "constraints)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shape", options.shape_texts,
                 "MxNxK or MxNxK:BUDGET, repeatable (default: the issue-4 shapes)");
  app.add_option("--dtype", options.dtype, "element type")->capture_default_str();
  app.add_option("--device", options.device, "GPU selector passed to the daemon (default: first)");
  app.add_option("--copy-json", options.copy_json,
                 "read the copy bandwidth from this kt-copy-bandwidth output instead of running it")
      ->check(CLI::ExistingFile);
  app.add_option("--copy-gbps", options.copy_gbps, "use this copy bandwidth (GB/s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out-dir", options.out_dir,
                 "where table.md and gemm.json go (default bench/results/<date>-<device>-gemm)");
  app.add_option("--latest", options.latest, "copy of the JSON report (\"\" = none)")
      ->capture_default_str();
  app.add_option("--readme", options.readme,
                 "replace the table between <!-- gemm-table:begin --> and <!-- gemm-table:end --> "
                 "in this file");
  app.add_option("--from-json", options.from_json,
                 "re-render an existing gemm.json (no daemon): table, latest copy, README")
      ->check(CLI::ExistingFile);
  app.add_option("--deadline-s", options.deadline_seconds,
                 "time for the whole run; later shapes are skipped and a running job is cut "
                 "short (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--job-timeout-s", options.job_timeout_seconds,
                 "cancel a job after this long and keep its best so far (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--poll-ms", options.poll_ms, "job polling interval")
      ->capture_default_str()
      ->check(CLI::Range(50, 60000));
  app.add_option("--compile-only-arch", options.compile_only_arch,
                 "dry run without a GPU: compile-only jobs for this arch, nothing timed (tests "
                 "the program and the daemon path)");
  app.get_option("--copy-json")->excludes("--copy-gbps");
  app.get_option("--from-json")
      ->excludes("--shape")
      ->excludes("--copy-json")
      ->excludes("--copy-gbps");
}

void finish_gemm_bench_options(GemmBenchOptions& options) {
  options.shapes.clear();
  if (options.shape_texts.empty()) {
    options.shapes = issue4_shapes();
  } else {
    for (const std::string& text : options.shape_texts)
      options.shapes.push_back(parse_shape_label(text));
  }
  if (options.dtype.empty()) throw std::invalid_argument("--dtype must not be empty");
}

GemmRow gemm_row_from_job(const GemmShape& shape, const std::string& dtype, const JobRun& run) {
  GemmRow row;
  row.shape = shape;
  row.dtype = dtype;
  row.tuning_seconds = run.seconds;
  const nlohmann::json& job = run.job;
  const JobCounts counts = job_counts(job);
  row.variants_measured = counts.measured;
  if (job.contains("reference_us") && job.at("reference_us").is_number())
    row.cublas_us = job.at("reference_us").get<double>();
  const nlohmann::json best = job.value("best", nlohmann::json());
  if (best.is_object() && best.contains("median_us") && best.at("median_us").is_number()) {
    row.ours_us = best.at("median_us").get<double>();
    row.config = pinned_config(best);
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
  if (!row.ours_us) notes.push_back("no variant measured");
  if (!row.cublas_us) notes.push_back("no cuBLAS time");
  for (const std::string& note : notes) row.note += (row.note.empty() ? "" : "; ") + note;
  return row;
}

CopyBandwidthInfo copy_bandwidth_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("gbps") || !j.at("gbps").is_number() ||
      !(j.at("gbps").get<double>() > 0))
    throw std::invalid_argument("the copy bandwidth JSON has no positive \"gbps\"");
  CopyBandwidthInfo info;
  info.gbps = j.at("gbps").get<double>();
  info.device = j.value("device", std::string());
  info.driver = j.value("driver", std::string());
  if (info.driver.empty() && j.contains("cuda_driver") && j.at("cuda_driver").is_string())
    info.driver = "CUDA " + j.at("cuda_driver").get<std::string>();  // no kernel module version
  return info;
}

int run_gemm_bench(const GemmBenchOptions& options, std::ostream& log) {
  GemmReport report;
  std::filesystem::path out_dir = options.out_dir;
  if (!options.from_json.empty()) {
    report = gemm_report_from_json(nlohmann::json::parse(read_text_file(options.from_json)));
    if (out_dir.empty()) out_dir = default_out_dir(report);
    write_outputs(report, out_dir);
  } else {
    report = tune_all_shapes(options, log, out_dir);
  }
  log << "wrote " << (out_dir / "table.md").string() << " and " << (out_dir / "gemm.json").string()
      << std::endl;
  if (!options.latest.empty() && std::filesystem::weakly_canonical(options.latest) !=
                                     std::filesystem::weakly_canonical(out_dir / "gemm.json")) {
    write_text_file(options.latest, gemm_report_to_json(report).dump(2) + "\n");
    log << "wrote " << options.latest.string() << std::endl;
  }
  if (!options.readme.empty()) {
    const std::string text = read_text_file(options.readme);
    // The link is relative to the README's folder, as GitHub resolves it.
    const std::filesystem::path readme_dir =
        std::filesystem::absolute(options.readme).parent_path();
    const std::string raw =
        std::filesystem::absolute(out_dir).lexically_relative(readme_dir).generic_string() + "/";
    write_text_file(options.readme, replace_marked_section(text, kGemmTableBegin, kGemmTableEnd,
                                                           render_gemm_table(report, raw)));
    log << "updated the table in " << options.readme.string() << std::endl;
  }
  std::cout << render_gemm_table(report);
  // Nothing measured is a failed run, unless nothing was meant to be (re-render, dry run).
  const bool any_measured = std::any_of(report.rows.begin(), report.rows.end(),
                                        [](const GemmRow& row) { return row.ours_us.has_value(); });
  const bool expect_measured = options.from_json.empty() && options.compile_only_arch.empty();
  return any_measured || !expect_measured ? 0 : 1;
}

}  // namespace kt::bench
