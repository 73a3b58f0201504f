#include "bench/attention_bench_run.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>

#include "bench/attention_launches.hpp"
#include "bench/bench_session.hpp"
#include "bench/doc_section.hpp"
#include "bench/job_figures.hpp"
#include "bench/output_files.hpp"
#include "bench/report_fields.hpp"
#include "bench/report_run.hpp"
#include "bench/result_names.hpp"
#include "bench/text_format.hpp"
#include "tuner/paths.hpp"

namespace kt::bench {
namespace {

const ReportNames kAttentionReportNames{
    "attention",        "attention.json",       kAttentionTableBegin,
    kAttentionTableEnd, "SDPA timing included", ""};

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void add_note(AttentionRow& row, const std::string& note) {
  row.note += (row.note.empty() ? "" : "; ") + note;
}

// A folder of its own under the system's temp folder, removed with the owner.
class WorkDir {
 public:
  explicit WorkDir(const std::filesystem::path& given) {
    if (!given.empty()) {
      path_ = given;
      std::filesystem::create_directories(path_);
      return;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "kt-attention-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary folder " + pattern);
    path_ = pattern;
    owned_ = true;
  }
  ~WorkDir() {
    std::error_code ignored;
    if (owned_) std::filesystem::remove_all(path_, ignored);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool owned_ = false;
};

// The job's final-comparison candidates (winner first, at most `count`), each with its config
// from the job's variants listing and its cubin downloaded into dir.
std::vector<LaunchCandidate> download_candidates(const kt::Client& client, std::int64_t job_id,
                                                 const std::vector<std::int64_t>& ids, int count,
                                                 const std::filesystem::path& dir) {
  const std::vector<nlohmann::json> variants = job_variants(client, job_id);
  std::vector<LaunchCandidate> candidates;
  for (const std::int64_t id : ids) {
    if (static_cast<int>(candidates.size()) >= count) break;
    const auto variant = std::find_if(variants.begin(), variants.end(), [&](const auto& v) {
      return v.is_object() && v.value("id", std::int64_t{0}) == id;
    });
    if (variant == variants.end()) continue;
    LaunchCandidate candidate;
    candidate.variant_id = id;
    candidate.config = pinned_config(*variant);
    candidate.cubin = dir / ("variant-" + std::to_string(id) + ".cubin");
    const std::vector<char> bytes = client.fetch_kernel(id);
    write_text_file(candidate.cubin, std::string(bytes.begin(), bytes.end()));
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

// Runs the command, its output (stdout and stderr) line by line into the log; the exit status.
int run_logged(const std::string& command, std::ostream& log) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) log << "  sdpa| " << buffer;
  log.flush();
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Times the prepared shapes against SDPA and merges the results into the rows.
void compare_with_sdpa(const AttentionBenchOptions& options,
                       const std::vector<nlohmann::json>& entries, double seconds,
                       const std::string& device, const std::filesystem::path& work,
                       AttentionReport& report, std::ostream& log) {
  const std::filesystem::path launches = work / "sdpa-launches.json";
  const std::filesystem::path output = work / "sdpa-output.json";
  write_text_file(launches, sdpa_launch_file(device, entries).dump(2) + "\n");
  const std::filesystem::path script =
      options.sdpa_script.empty() ? program_dir() / ".." / ".." / "bench" / "sdpa_baseline.py"
                                  : options.sdpa_script;
  const std::string command =
      sdpa_command(options.python, script, launches, output, seconds, options.sdpa_args);
  log << "[sdpa] " << entries.size() << " shape(s): " << command << std::endl;
  const int exit_code = run_logged(command, log);
  nlohmann::json result;
  try {
    result = nlohmann::json::parse(read_text_file(output));
  } catch (const std::exception& error) {
    const std::string note = "SDPA comparison failed (script exit " + std::to_string(exit_code) +
                             ", no readable output: see the log)";
    log << "[sdpa] " << note << ": " << error.what() << std::endl;
    for (AttentionRow& row : report.rows)
      if (row.job_us) add_note(row, note);
    return;
  }
  if (exit_code != 0) log << "[sdpa] script exit " << exit_code << std::endl;
  apply_sdpa_results(report, result);
  if (result.contains("error") && result.at("error").is_string())
    log << "[sdpa] " << result.at("error").get<std::string>() << std::endl;
}

void tune_and_compare(const AttentionBenchOptions& options, AttentionReport& report,
                      ReportWriter& writer, std::ostream& log) {
  const JobLoop jobs(options, log);
  const kt::Client& client = jobs.client();
  report.date = utc_date();
  const DaemonDevice device = daemon_device(client);
  report.device = device.name;
  report.driver = device.driver;
  writer.settle_out_dir(report.date, report.device);
  const WorkDir work(options.work_dir);
  const bool compare = options.compile_only_arch.empty();

  std::optional<Family> family;
  std::string family_error;
  try {
    const std::filesystem::path dir =
        options.families.empty() ? default_families_dir() : options.families;
    family = load_family(dir / "attention_fwd");
  } catch (const std::exception& error) {
    family_error = error.what();
  }
  // The tuning jobs leave the SDPA script its time out of the run's deadline.
  const double tuning_deadline =
      options.deadline_seconds > 0 ? std::max(1.0, options.deadline_seconds - options.sdpa_seconds)
                                   : 0.0;
  std::vector<nlohmann::json> entries;
  for (const AttentionShape& shape : options.shapes) {
    for (const std::string& dtype : options.dtypes) {
      const std::string label = "attention_fwd " + attention_shape_key(shape) + " " + dtype;
      JobRequest request;
      request.family = "attention_fwd";
      request.dims = {{"B", shape.b},
                      {"H", shape.h},
                      {"S", shape.s},
                      {"D", shape.d},
                      {"CAUSAL", shape.causal ? 1 : 0}};
      request.dtype = dtype;
      request.device = options.device;
      request.budget = shape.budget >= 0 ? shape.budget : options.budget;
      request.arch = options.compile_only_arch;
      const JobAttempt attempt =
          jobs.run(request, label, options.job_timeout_seconds, tuning_deadline);
      AttentionRow row;
      row.shape = shape;
      row.dtype = dtype;
      row.note = attempt.note;
      if (attempt.run) {
        row = attention_row_from_job(shape, dtype, *attempt.run);
        try {
          const JobFigures figures = job_figures(*attempt.run, /*expect_baseline=*/false);
          if (compare && row.job_us) {
            if (!family) throw std::runtime_error("family not loaded: " + family_error);
            if (device.info.is_null()) throw std::runtime_error("the daemon lists no GPU");
            const DeviceLimits limits = limits_for_device(device_info_from_json(device.info));
            const auto candidates = download_candidates(client, row.job_id, figures.candidate_ids,
                                                        options.candidates, work.path() / "cubins");
            entries.push_back(attention_launch_entry(*family, shape, dtype, limits, candidates));
            log << "[" << label << "] job median " << format_us(row.job_us) << "; "
                << candidates.size() << " candidate(s) ready for the SDPA comparison" << std::endl;
          }
        } catch (const kt::ClientError& error) {
          add_note(row, "job refused or daemon unreachable: " + std::string(error.what()));
          log << "[" << label << "] " << row.note << std::endl;
        } catch (const std::exception& error) {
          add_note(row,
                   "candidates not prepared for the SDPA comparison: " + std::string(error.what()));
          log << "[" << label << "] " << row.note << std::endl;
        }
      }
      report.rows.push_back(std::move(row));
      writer.write();
    }
  }
  if (!compare) return;
  if (entries.empty()) {
    log << "[sdpa] nothing to compare: no job measured a variant" << std::endl;
    for (AttentionRow& row : report.rows)
      if (row.note.empty()) add_note(row, "not compared with SDPA");
    return;
  }
  double seconds = 0;  // no limit without a deadline
  if (options.deadline_seconds > 0)
    seconds = std::max(30.0, options.deadline_seconds - jobs.elapsed());
  compare_with_sdpa(options, entries, seconds, device.name, work.path(), report, log);
  writer.write();
}

}  // namespace

void add_attention_bench_options(CLI::App& app, AttentionBenchOptions& options) {
  app.description(
      "Tunes attention_fwd shapes through a running kerntuned (one job per shape and dtype), then "
      "runs bench/sdpa_baseline.py, which times each job's final-comparison candidates "
      "interleaved with PyTorch SDPA (flash, cuDNN and default backends) in one process on the "
      "same GPU: <out-dir>/table.md and attention.json, a copy of the JSON at --latest, and "
      "optionally the table of --doc.");
  add_bench_run_options(app, options, kAttentionReportNames);
  app.add_option("--shape", options.shape_texts,
                 "BxHxSxD, BxHxSxDc (causal), either with :BUDGET; repeatable (default: eleven "
                 "shapes from 1x1x32x64 to 2x16x8192x128)");
  app.add_option("--dtype", options.dtypes, "element types, repeatable")->capture_default_str();
  app.add_option("--families", options.families,
                 "kernel_templates folder for evaluating launches (default: next to the program)");
  app.add_option("--work-dir", options.work_dir,
                 "keep the cubins, the script's argument file and its output here (default: a "
                 "temporary folder, removed at the end)");
  app.add_option("--sdpa-s", options.sdpa_seconds,
                 "of the deadline, the time kept for the SDPA script")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--candidates", options.candidates,
                 "per shape, the job's final-comparison candidates timed against SDPA")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app.add_option("--python", options.python, "Python interpreter with torch")
      ->capture_default_str();
  app.add_option("--sdpa-script", options.sdpa_script,
                 "the SDPA script (default: bench/sdpa_baseline.py two folders above the program)");
  app.add_option("--sdpa-arg", options.sdpa_args,
                 "passed on to the SDPA script, repeatable (e.g. --sdpa-arg=--rounds=40)");
  app.get_option("--from-json")->excludes("--shape");
}

void finish_attention_bench_options(AttentionBenchOptions& options) {
  options.shapes.clear();
  if (options.shape_texts.empty()) options.shapes = default_attention_shapes();
  for (const std::string& text : options.shape_texts)
    options.shapes.push_back(parse_attention_shape(text));
  if (options.dtypes.empty()) throw std::invalid_argument("--dtype must name a dtype");
  for (const std::string& dtype : options.dtypes)
    if (dtype != "bf16" && dtype != "fp16")
      throw std::invalid_argument("--dtype " + dtype + ": attention_fwd takes bf16 or fp16");
}

AttentionRow attention_row_from_job(const AttentionShape& shape, const std::string& dtype,
                                    const JobRun& run) {
  const JobFigures figures = job_figures(run, /*expect_baseline=*/false);
  AttentionRow row;
  row.shape = shape;
  row.dtype = dtype;
  row.config = figures.config;
  row.job_us = figures.ours_us;
  row.variants_measured = figures.variants_measured;
  row.tuning_seconds = figures.tuning_seconds;
  row.job_id = run.job.value("id", std::int64_t{0});
  row.note = figures.note;
  return row;
}

std::string sdpa_command(const std::string& python, const std::filesystem::path& script,
                         const std::filesystem::path& launches, const std::filesystem::path& out,
                         double seconds, const std::vector<std::string>& extra_args) {
  std::string command;
  if (seconds > 0) {
    // The script stops starting shapes at its own deadline; timeout is the backstop.
    command = "timeout -k 10 " + format_fixed(seconds, 0) + " ";
  }
  command += shell_quote(python) + " " + shell_quote(script.string()) + " --launches " +
             shell_quote(launches.string()) + " --out " + shell_quote(out.string());
  if (seconds > 0) command += " --deadline-s " + format_fixed(std::max(1.0, seconds - 15), 0);
  for (const std::string& arg : extra_args) command += " " + shell_quote(arg);
  return command;
}

int run_attention_bench(const AttentionBenchOptions& options, std::ostream& log) {
  AttentionReport report;
  ReportFormat format{
      kAttentionReportNames, [&report] { return attention_report_to_json(report); },
      [&report](const std::string& raw) { return render_attention_table(report, raw); }};
  ReportingFamily family;
  family.load = [&report](const nlohmann::json& j) { report = attention_report_from_json(j); };
  family.tune = [&](ReportWriter& writer) { tune_and_compare(options, report, writer, log); };
  family.has_result = [&report] {
    return std::any_of(report.rows.begin(), report.rows.end(),
                       [](const AttentionRow& row) { return row.ratio.has_value(); });
  };
  family.date_and_device = [&report] { return std::make_pair(report.date, report.device); };
  return run_reporting_family(options, std::move(format), family, log);
}

}  // namespace kt::bench
