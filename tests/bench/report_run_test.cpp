#include "bench/report_run.hpp"

#include <gtest/gtest.h>

#include "bench/output_files.hpp"
#include "support/test_paths.hpp"

namespace kt::bench {
namespace {

const ReportNames kNames{"toy", "toy.json", "<!-- toy:begin -->", "<!-- toy:end -->", "", ""};

// A family whose report is a list of numbers; "measured" when it holds one.
struct ToyFamily {
  nlohmann::json report = {{"date", "2026-01-02"}, {"device", "NVIDIA Toy"}, {"rows", {}}};

  ReportFormat format() {
    return {kNames, [this] { return report; },
            [this](const std::string& raw) {
              std::string table = "| rows |\n| " + std::to_string(report["rows"].size()) + " |\n";
              return raw.empty() ? table : table + "Raw output: " + raw + "\n";
            }};
  }
  ReportingFamily family(std::vector<int> rows_to_add) {
    ReportingFamily f;
    f.load = [this](const nlohmann::json& j) { report = j; };
    f.tune = [this, rows_to_add](ReportWriter& writer) {
      writer.settle_out_dir(report["date"], report["device"]);
      for (int row : rows_to_add) {
        report["rows"].push_back(row);
        writer.write();
      }
    };
    f.has_result = [this] { return !report["rows"].empty(); };
    f.date_and_device = [this] {
      return std::make_pair(report["date"].get<std::string>(), report["device"].get<std::string>());
    };
    return f;
  }
};

TEST(ReportRun, ReRendersFromJsonIntoTheFolderTheLatestCopyAndTheDoc) {
  test::TempDir dir;
  const auto json = dir.path() / "old.json";
  write_text_file(json, R"({"date": "2026-01-02", "device": "NVIDIA Toy", "rows": [7, 8]})");
  const auto doc = dir.path() / "docs" / "benchmarks.md";
  write_text_file(doc, "# b\n<!-- toy:begin -->\nold\n<!-- toy:end -->\nafter\n");
  BenchRunOptions options(dir.path() / "latest.json");
  options.from_json = json;
  options.out_dir = dir.path() / "results" / "run";
  options.doc = doc;
  ToyFamily toy;
  std::ostringstream log;
  EXPECT_EQ(run_reporting_family(options, toy.format(), toy.family({}), log), 0);
  EXPECT_EQ(read_text_file(options.out_dir / "table.md"), "| rows |\n| 2 |\n");
  EXPECT_EQ(nlohmann::json::parse(read_text_file(options.out_dir / "toy.json"))["rows"].size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(read_text_file(options.latest)),
            nlohmann::json::parse(read_text_file(json)));
  // The doc's table links the raw output relative to the doc's folder.
  EXPECT_EQ(read_text_file(doc),
            "# b\n<!-- toy:begin -->\n| rows |\n| 2 |\nRaw output: ../results/run/\n"
            "<!-- toy:end -->\nafter\n");
}

TEST(ReportRun, ATuningRunWithoutAResultFailsUnlessItWasADryRun) {
  test::TempDir dir;
  BenchRunOptions options("");
  options.out_dir = dir.path() / "out";
  ToyFamily nothing;
  std::ostringstream log;
  EXPECT_EQ(run_reporting_family(options, nothing.format(), nothing.family({}), log), 1);

  options.compile_only_arch = "sm_90a";
  ToyFamily dry;
  EXPECT_EQ(run_reporting_family(options, dry.format(), dry.family({}), log), 0);

  options.compile_only_arch.clear();
  ToyFamily measured;
  EXPECT_EQ(run_reporting_family(options, measured.format(), measured.family({1, 2, 3}), log), 0);
  EXPECT_EQ(read_text_file(options.out_dir / "table.md"), "| rows |\n| 3 |\n");
}

TEST(ReportRun, TheDefaultFolderIsNamedByDateDeviceAndReport) {
  BenchRunOptions options("");
  ToyFamily toy;
  ReportWriter writer(options, toy.format());
  writer.settle_out_dir("2026-01-02", "NVIDIA H200");
  const auto first = writer.out_dir();
  EXPECT_EQ(first.parent_path(), "bench/results");
  EXPECT_NE(first.filename().string().find("2026-01-02"), std::string::npos) << first;
  EXPECT_NE(first.filename().string().find("toy"), std::string::npos) << first;
  writer.settle_out_dir("2030-01-01", "other");  // the first call decides
  EXPECT_EQ(writer.out_dir(), first);
  options.out_dir = "/given";
  ReportWriter given(options, toy.format());
  given.settle_out_dir("2026-01-02", "NVIDIA H200");
  EXPECT_EQ(given.out_dir(), "/given");
}

}  // namespace
}  // namespace kt::bench
