#include "bench/bench_run_options.hpp"

#include "bench/doc_section.hpp"
#include "bench/output_files.hpp"

namespace kt::bench {

namespace {

std::string with_note(std::string help, const std::string& note) {
  return note.empty() ? help : help + "; " + note;
}

}  // namespace

void add_bench_run_options(CLI::App& app, BenchRunOptions& options, const ReportNames& names) {
  app.add_option("--server", options.server, "kerntuned URL")->capture_default_str();
  app.add_option("--budget", options.budget,
                 "variants per shape through compile/measure (0 = all that survive the "
                 "constraints)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--device", options.device, "GPU selector passed to the daemon (default: first)");
  app.add_option("--out-dir", options.out_dir,
                 "where table.md and " + names.json_file + " go (default bench/results/<date>-" +
                     "<device>-" + names.report + ")");
  app.add_option("--latest", options.latest, "copy of the JSON report (\"\" = none)")
      ->capture_default_str();
  // --doc alone names the benchmarks document; absent, no document is touched.
  app.add_option_function<std::string>(
         "--doc",
         [&options](const std::string& file) {
           options.doc = file.empty() ? kDefaultBenchmarkDoc : file;
         },
         "replace the table between " + names.table_begin + " and " + names.table_end +
             " in this document (without a file: " + kDefaultBenchmarkDoc + ")")
      ->expected(0, 1);
  app.add_option(
         "--from-json", options.from_json,
         "re-render an existing " + names.json_file + " (no daemon): table, latest copy, document")
      ->check(CLI::ExistingFile);
  app.add_option("--deadline-s", options.deadline_seconds,
                 with_note("time for the whole run; later shapes are skipped and a running job "
                           "is cut short (0 = none)",
                           names.deadline_note))
      ->check(CLI::NonNegativeNumber);
  app.add_option("--job-timeout-s", options.job_timeout_seconds,
                 with_note("cancel a job after this long and keep its best so far (0 = none)",
                           names.job_timeout_note))
      ->check(CLI::NonNegativeNumber);
  app.add_option("--poll-ms", options.poll_ms, "job polling interval")
      ->capture_default_str()
      ->check(CLI::Range(50, 60000));
  app.add_option("--compile-only-arch", options.compile_only_arch,
                 "dry run without a GPU: compile-only jobs for this arch, nothing timed (tests "
                 "the program and the daemon path)");
}

void publish_report(const BenchRunOptions& options, const ReportNames& names,
                    const std::filesystem::path& out_dir, const nlohmann::json& report_json,
                    const std::function<std::string(const std::string& raw_link)>& render_table,
                    std::ostream& log) {
  const std::filesystem::path json_path = out_dir / names.json_file;
  log << "wrote " << (out_dir / "table.md").string() << " and " << json_path.string() << std::endl;
  if (!options.latest.empty() && std::filesystem::weakly_canonical(options.latest) !=
                                     std::filesystem::weakly_canonical(json_path)) {
    write_text_file(options.latest, report_json.dump(2) + "\n");
    log << "wrote " << options.latest.string() << std::endl;
  }
  if (options.doc.empty()) return;
  const std::filesystem::path doc_dir = std::filesystem::absolute(options.doc).parent_path();
  const std::string raw =
      std::filesystem::absolute(out_dir).lexically_relative(doc_dir).generic_string() + "/";
  write_text_file(options.doc,
                  replace_marked_section(read_text_file(options.doc), names.table_begin,
                                         names.table_end, render_table(raw)));
  log << "updated the table in " << options.doc.string() << std::endl;
}

}  // namespace kt::bench
