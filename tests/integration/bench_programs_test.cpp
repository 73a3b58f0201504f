// The benchmark programs as the device suite runs them, against a real kerntuned on loopback
// (started with harness/daemon_process): kt-bench gemm end to end in compile-only mode (jobs
// through the HTTP API, polling, table and JSON, the latest copy, the document's table), its
// re-render from JSON, kt-bench engine's handling of a daemon that cannot tune (no GPU here),
// and kt-copy-bandwidth without a driver.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "client/kerntune_client.hpp"
#include "harness/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "tuner/text.hpp"

namespace kt {
namespace {

using harness::DaemonProcess;

// The marker lines of the benchmark table, spelled out: they are what a document holds, and this
// test does not link the benchmark code.
constexpr const char* kGemmTableBegin = "<!-- gemm-table:begin -->";
constexpr const char* kGemmTableEnd = "<!-- gemm-table:end -->";

struct ProgramRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

ProgramRun run_program(const std::string& name, const std::string& args) {
  const std::string command = (test::binary_dir() / name).string() + " " + args + " 2>&1";
  ProgramRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class BenchPrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<DaemonProcess>(
        test::binary_dir() / "kerntuned", dir_.path() / "kerntune.db", dir_.path() / "daemon.log",
        std::vector<std::string>{"--families", (test::source_dir() / "kernel_templates").string(),
                                 "--compile-threads", "2"});
    daemon_->wait_healthy(std::chrono::seconds(60));
    gpu_ = !kt::Client(daemon_->url()).devices().value("devices", nlohmann::json::array()).empty();
  }

  test::TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  bool gpu_ = false;
};

TEST_F(BenchPrograms, GemmBenchDryRunWritesTableJsonLatestAndDoc) {
  const auto out = dir_.path() / "gemm";
  const auto latest = dir_.path() / "latest.json";
  const auto doc = dir_.path() / "benchmarks.md";
  write_text_file(
      doc, "# t\n\n" + std::string(kGemmTableBegin) + "\nold\n" + kGemmTableEnd + "\nafter\n");
  const ProgramRun run = run_program(
      "kt-bench", "gemm --server " + daemon_->url() +
                      " --compile-only-arch sm_90a --shape 67x4096x7168:1 --copy-gbps 3000 "
                      "--poll-ms 100 --out-dir " +
                      out.string() + " --latest " + latest.string() + " --doc " + doc.string());
  ASSERT_EQ(run.exit_code, 0) << run.output << daemon_->log_tail();
  EXPECT_NE(run.output.find("[gemm 67x4096x7168] job 1 done 1/1 variants"), std::string::npos)
      << run.output;

  const nlohmann::json report = nlohmann::json::parse(read_text_file(out / "gemm.json"));
  EXPECT_EQ(report.at("copy_gbps"), 3000.0);
  ASSERT_EQ(report.at("rows").size(), 1u);
  const nlohmann::json& row = report.at("rows")[0];
  EXPECT_EQ(row.at("shape"), "67x4096x7168");
  EXPECT_TRUE(row.at("ours_us").is_null());  // compile-only: nothing timed
  EXPECT_EQ(row.at("note"), "no variant measured; no baseline time");
  EXPECT_EQ(nlohmann::json::parse(read_text_file(latest)), report);

  const std::string table = read_text_file(out / "table.md");
  EXPECT_NE(table.find("| 67×4096×7168 | — |"), std::string::npos) << table;
  const std::string doc_text = read_text_file(doc);
  EXPECT_NE(doc_text.find(table.substr(0, table.find('\n'))), std::string::npos);
  EXPECT_EQ(doc_text.find("\nold\n"), std::string::npos);
  EXPECT_NE(doc_text.find(std::string(kGemmTableEnd) + "\nafter\n"), std::string::npos);

  // Re-rendered from its JSON (no daemon), the same table.
  const auto again = dir_.path() / "again";
  const ProgramRun render =
      run_program("kt-bench", "gemm --from-json " + (out / "gemm.json").string() + " --out-dir " +
                                  again.string() + " --latest \"\"");
  ASSERT_EQ(render.exit_code, 0) << render.output;
  EXPECT_EQ(read_text_file(again / "table.md"), table);
}

TEST_F(BenchPrograms, GemmBenchArgumentErrors) {
  EXPECT_EQ(run_program("kt-bench", "gemm --shape 64x64").exit_code, 1);
  EXPECT_NE(run_program("kt-bench", "").exit_code, 0);  // a family is required
  EXPECT_NE(run_program("kt-bench", "gemm-bench --budget 1").exit_code, 0);
  EXPECT_NE(run_program("kt-bench", "gemm --budget -3").exit_code, 0);
  const ProgramRun unreachable =
      run_program("kt-bench",
                  "gemm --server http://127.0.0.1:1 --copy-gbps 1 --latest \"\" "
                  "--out-dir " +
                      (dir_.path() / "x").string());
  EXPECT_EQ(unreachable.exit_code, 3) << unreachable.output;
}

TEST_F(BenchPrograms, EngineBenchRecordsWhyEachPhaseFailedWithoutAGpu) {
  if (gpu_) GTEST_SKIP() << "a GPU is present: this checks the no-GPU path";
  const auto out = dir_.path() / "engine";
  const ProgramRun run = run_program(
      "kt-bench", "engine --server " + daemon_->url() +
                      " --phases spread,repeat --poll-ms 100 --out-dir " + out.string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  const nlohmann::json report = nlohmann::json::parse(read_text_file(out / "engine.json"));
  ASSERT_EQ(report.at("notes").size(), 2u) << report.dump(2);
  EXPECT_NE(report.at("notes")[0].get<std::string>().find("spread: failed: no GPU"),
            std::string::npos);
  EXPECT_TRUE(report.at("spread").is_null());
  EXPECT_TRUE(report.at("sweeps").empty());
  EXPECT_NE(read_text_file(out / "table.md").find("- repeat: failed"), std::string::npos);
}

TEST(CopyBandwidthProgram, PrintsJsonOrSaysWhyNot) {
  const ProgramRun run = run_program("kt-copy-bandwidth", "--trials 20 --bytes 268435456");
  if (run.exit_code == 0) {
    const nlohmann::json j = nlohmann::json::parse(run.output);
    EXPECT_GT(j.at("gbps").get<double>(), 0);
    EXPECT_EQ(j.at("trials"), 20);
  } else {
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.output.find("kt-copy-bandwidth: "), std::string::npos) << run.output;
  }
  EXPECT_NE(run_program("kt-copy-bandwidth", "--trials 0").exit_code, 0);
}

}  // namespace
}  // namespace kt
