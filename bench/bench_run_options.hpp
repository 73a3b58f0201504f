// What every reporting family of kt-bench (gemm, dual-gemm, attention) takes beside its shapes, and
// how each publishes its report: the daemon's URL, where the report goes, deadlines, and a dry run
// without a GPU.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kt::bench {

struct BenchRunOptions {
  explicit BenchRunOptions(std::filesystem::path latest_copy) : latest(std::move(latest_copy)) {}

  std::string server = "http://127.0.0.1:8080";
  std::int64_t budget = 0;          // variants per shape (0 = all), unless the shape names its own
  std::string device;               // the daemon's GPU selector; "" = its first GPU
  std::filesystem::path out_dir;    // "" = bench/results/<date>-<device>-<report>
  std::filesystem::path latest;     // a copy of the JSON report; "" = none
  std::filesystem::path doc;        // the document whose table is replaced; "" = none
  std::filesystem::path from_json;  // re-render this report; no daemon, no GPU
  double deadline_seconds = 0;      // 0 = none; later shapes are skipped once it has passed
  double job_timeout_seconds = 0;   // 0 = none; a job past it is cancelled (best so far kept)
  int poll_ms = 1000;
  std::string compile_only_arch;  // dry run without a GPU: compile-only jobs, nothing timed
};

// A program's report as the shared options and publish_report name it.
struct ReportNames {
  std::string report;       // "gemm": its folder bench/results/<date>-<device>-<report>
  std::string json_file;    // "gemm.json", beside table.md in the output folder
  std::string table_begin;  // the document's markers around the table
  std::string table_end;
  std::string deadline_note;     // appended to --deadline-s's help ("" = none)
  std::string job_timeout_note;  // appended to --job-timeout-s's help ("" = none)
};

// The document --doc names when given without a file.
inline constexpr const char* kDefaultBenchmarkDoc = "docs/benchmarks.md";

// Declares --server, --out-dir, --latest, --doc, --from-json, --deadline-s, --job-timeout-s,
// --poll-ms and --compile-only-arch on app, writing into options.
void add_bench_run_options(CLI::App& app, BenchRunOptions& options, const ReportNames& names);

// After the program wrote table.md and the JSON report into out_dir: copies the JSON to
// options.latest (unless that is the same file) and replaces the marked table in options.doc,
// whose raw-output link render_table gets relative to the document's folder (as GitHub resolves
// it). Says what it wrote on log.
void publish_report(const BenchRunOptions& options, const ReportNames& names,
                    const std::filesystem::path& out_dir, const nlohmann::json& report_json,
                    const std::function<std::string(const std::string& raw_link)>& render_table,
                    std::ostream& log);

}  // namespace kt::bench
