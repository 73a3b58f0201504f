// The real binaries: kerntuned started as a child process on a free port with a temp database,
// and the kerntune CLI run against it as a user would. Checks exit codes and what is printed, and
// that a restarted daemon still knows the jobs of the previous one.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/http_transport.hpp"
#include "client/kerntune_client.hpp"
#include "db/store.hpp"
#include "harness/daemon_process.hpp"
#include "support/baseline_fixtures.hpp"
#include "support/child_process.hpp"
#include "support/eventually.hpp"
#include "support/metrics_exposition.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

// kerntuned on a free loopback port, its log in dir/kerntuned-<tag>.log.
class Daemon : public harness::DaemonProcess {
 public:
  Daemon(const std::filesystem::path& dir, const std::filesystem::path& db, const std::string& tag,
         std::vector<std::string> extra = {})
      : DaemonProcess(test::binary_dir() / "kerntuned", db, dir / ("kerntuned-" + tag + ".log"),
                      with_extra({"--families", (test::source_dir() / "kernel_templates").string(),
                                  "--compile-threads", "2"},
                                 std::move(extra))) {}

 private:
  static std::vector<std::string> with_extra(std::vector<std::string> args,
                                             std::vector<std::string> extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

class CliTest : public ::testing::Test {
 protected:
  CliRun kerntune(const std::string& server, std::vector<std::string> args) {
    args.insert(args.begin(), {(test::binary_dir() / "kerntune").string(), "--server", server});
    const auto out = dir_.path() / "cli.out";
    const auto err = dir_.path() / "cli.err";
    CliRun run;
    run.exit_code = test::wait_exit(test::spawn(args, out, err), 120s).value_or(-1);
    run.out = test::read_text(out);
    run.err = test::read_text(err);
    return run;
  }

  test::TempDir dir_;
  std::filesystem::path db_ = dir_.path() / "kerntune.db";
};

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not in:\n" << text;
}

// The daemon answers in pages of at most 1000 (100 by default); `kerntune show` and the client
// follow `next`, so a job larger than a page is still shown whole.
TEST_F(CliTest, ShowListsEveryVariantOfAJobLargerThanAPage) {
  std::int64_t job_id = 0;
  std::vector<std::int64_t> variant_ids;
  {
    Store store(db_);
    job_id = store.create_job(test::tune_job());
    std::vector<VariantRecord> plan;
    for (int bm = 1; bm <= 1150; ++bm) plan.push_back(test::planned(bm, VariantStatus::compiled));
    for (const VariantRecord& v : store.plan_variants(job_id, plan)) variant_ids.push_back(v.id);
    store.set_job_status(job_id, JobStatus::done);  // finished: the daemon does not resume it
  }
  Daemon daemon(dir_.path(), db_, "paged");
  ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();

  const auto one_page = Client(daemon.url()).variants_page(job_id, false, false, "");
  EXPECT_EQ(one_page["variants"].size(), 100u);
  EXPECT_TRUE(one_page["next"].is_string());

  const CliRun json = kerntune(daemon.url(), {"--json", "show", std::to_string(job_id)});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto shown = nlohmann::json::parse(json.out)["variants"];
  ASSERT_EQ(shown.size(), variant_ids.size());
  for (std::size_t i = 0; i < shown.size(); ++i) EXPECT_EQ(shown[i]["id"], variant_ids[i]) << i;

  const CliRun text = kerntune(daemon.url(), {"show", std::to_string(job_id)});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::size_t rows = 0;
  for (std::size_t at = text.out.find("gemm_mma"); at != std::string::npos;
       at = text.out.find("gemm_mma", at + 1))
    ++rows;
  EXPECT_EQ(rows, variant_ids.size());
}

// `kerntune wait` on a job that ended long ago says how long the job took, not how long it waited.
TEST_F(CliTest, WaitReportsTheJobsOwnDuration) {
  std::int64_t job_id = 0;
  {
    Store store(db_);
    job_id = store.create_job(test::tune_job());
    store.plan_variants(job_id, {test::planned(64, VariantStatus::compiled)});
    store.set_job_timing(job_id, 7.07, std::nullopt);
    store.set_job_status(job_id, JobStatus::done);
  }
  Daemon daemon(dir_.path(), db_, "waited");
  ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();
  const CliRun waited = kerntune(daemon.url(), {"wait", std::to_string(job_id)});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_TRUE(contains(waited.out, "job " + std::to_string(job_id) + " done after 7.1 s"));
}

// Issue 14: when the library wins the final comparison, `kerntune best` answers with the library
// call and puts our best beside it; `kerntune history` says how many compared jobs ours won.
TEST_F(CliTest, BestAnswersWithTheLibraryWhenItWinsAndJobsCountOurWins) {
  {
    Store store(db_);
    test::seed_compared_job(store, {{"M", 128}, {"N", 4096}, {"K", 7168}}, 30.2, 30.5, 26.6,
                            {0.872, 0.868, 0.875});
    test::seed_compared_job(store, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, 25.0, 25.1, 26.6,
                            {1.06, 1.04, 1.08});
  }
  Daemon daemon(dir_.path(), db_, "baseline");
  ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();

  const CliRun lost =
      kerntune(daemon.url(), {"best", "gemm", "--shape", "M=128,N=4096,K=7168", "--dtype", "bf16"});
  ASSERT_EQ(lost.exit_code, 0) << lost.err;
  EXPECT_TRUE(contains(lost.out, "is faster for this shape: call the library.")) << lost.out;
  EXPECT_TRUE(contains(lost.out, "cublasLt 130100")) << lost.out;
  EXPECT_TRUE(contains(lost.out, "our best:  wgmma_tma_ws")) << lost.out;
  EXPECT_TRUE(contains(lost.out, "why:       ")) << lost.out;
  EXPECT_FALSE(contains(lost.out, "template:")) << lost.out;

  const CliRun won = kerntune(
      daemon.url(), {"best", "gemm", "--shape", "M=4096,N=4096,K=4096", "--dtype", "bf16"});
  ASSERT_EQ(won.exit_code, 0) << won.err;
  EXPECT_TRUE(contains(won.out, "template:  wgmma_tma_ws")) << won.out;
  EXPECT_FALSE(contains(won.out, "call the library")) << won.out;

  const CliRun jobs = kerntune(daemon.url(), {"history"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_TRUE(contains(jobs.out,
                       "our kernels beat the baseline (final comparison, interval above "
                       "1) in 1 of 2 compared jobs listed"))
      << jobs.out;
}

// Issue 15: an untuned shape answered with the nearest tuned one says so plainly, a result of
// another family source says it is stale, and --tune-on-miss on a host without a GPU is refused
// with the reason.
TEST_F(CliTest, BestSaysWhereANearestOrStaleAnswerCameFrom) {
  std::int64_t id = 0;
  {
    Store store(db_);
    NewJob job = test::tune_job();
    job.family_hash = "0123456789abcdef";  // tuned with sources this daemon does not have
    id = store.create_job(job);
    const auto rows = test::plan(store, id, 2);
    store.record_outcome(rows[0].id, test::measured(100, 0.001));
    store.record_outcome(rows[1].id, test::measured(120, 0.001));
    store.set_job_status(id, JobStatus::done);
  }
  Daemon daemon(dir_.path(), db_, "nearest");
  ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();
  const std::vector<std::string> miss{"best",    "gemm", "--shape", "M=2048,N=4096,K=4096",
                                      "--dtype", "bf16"};
  const CliRun plain = kerntune(daemon.url(), miss);
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_TRUE(contains(plain.err, "--nearest answers with the nearest tuned shape")) << plain.err;
  EXPECT_FALSE(contains(plain.err, "nearest=1"));

  std::vector<std::string> nearest = miss;
  nearest.push_back("--nearest");
  const CliRun near = kerntune(daemon.url(), nearest);
  ASSERT_EQ(near.exit_code, 0) << near.err;
  EXPECT_TRUE(contains(near.out, "NOT TUNED for M=2048 N=4096 K=4096"));
  EXPECT_TRUE(contains(near.out, "distance 0.693"));
  EXPECT_TRUE(contains(near.out, "STALE:"));
  EXPECT_TRUE(contains(near.out, "family_hash 0123456789abcdef -> "));

  const CliRun json =
      kerntune(daemon.url(), {"--json", "best", "gemm", "--shape", "M=2048,N=4096,K=4096",
                              "--dtype", "bf16", "--nearest"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["exact"], false);

  const CliRun show = kerntune(daemon.url(), {"show", std::to_string(id)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "STALE:     tuned before a change (family_hash"));

  nearest.push_back("--tune-on-miss");
  const CliRun tune = kerntune(daemon.url(), nearest);
  EXPECT_EQ(tune.exit_code, 1);
  EXPECT_TRUE(contains(tune.err, "no GPU on this host"));
}

// An untuned shape with --predict: the shape predictor's config, printed as PREDICTED (the daemon
// fits it in the background from the recorded spaces it is given, so the first asks may miss).
TEST_F(CliTest, BestPredictPrintsThePredictedConfigAsSuch) {
  Daemon daemon(
      dir_.path(), db_, "predict",
      {"--predictor-spaces", (test::source_dir() / "tests/data/spaces-2026-12").string()});
  ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();
  const std::vector<std::string> ask{"best",    "gemm", "--shape",  "333x4096x4096",
                                     "--dtype", "bf16", "--predict"};
  CliRun run;
  // The GEMM fit (ten spaces, and four more fits for its interval) takes seconds on an idle
  // machine and much longer beside other suites on two cores.
  const auto deadline = std::chrono::steady_clock::now() + 150s;
  while (std::chrono::steady_clock::now() < deadline) {
    run = kerntune(daemon.url(), ask);
    if (run.exit_code == 0) break;
    EXPECT_TRUE(contains(run.err, "no shape predictor for gemm bf16 yet")) << run.err;
    std::this_thread::sleep_for(500ms);
  }
  ASSERT_EQ(run.exit_code, 0) << run.err << daemon.log();
  EXPECT_TRUE(contains(run.out, "PREDICTED for gemm bf16 M=333 N=4096 K=4096"));
  EXPECT_TRUE(contains(run.out, "never measured for this shape"));
  EXPECT_TRUE(contains(run.out, "expected:"));
  // The first answer queues the config's compile check; its job id may not be known yet.
  EXPECT_TRUE(contains(run.out, "compiles:  being checked")) << run.out;
  EXPECT_FALSE(contains(run.out, "job -")) << run.out;
  const CliRun json = kerntune(daemon.url(), {"--json", "best", "gemm", "--shape", "333x4096x4096",
                                              "--dtype", "bf16", "--predict"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["source"], "predicted");
  // Without --predict the same miss stays a miss.
  const CliRun plain =
      kerntune(daemon.url(), {"best", "gemm", "--shape", "333x4096x4096", "--dtype", "bf16"});
  EXPECT_EQ(plain.exit_code, 1);
}

TEST_F(CliTest, SubmitWaitHistoryShowThenRestartKeepsHistory) {
  std::string job_id;
  {
    Daemon daemon(dir_.path(), db_, "first");
    ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
    const std::string server = daemon.url();

    const CliRun families = kerntune(server, {"families"});
    EXPECT_EQ(families.exit_code, 0) << families.err;
    EXPECT_TRUE(contains(families.out, "gemm"));
    EXPECT_TRUE(contains(families.out, "dtypes:"));
    EXPECT_TRUE(contains(families.out, "bf16"));

    const CliRun devices = kerntune(server, {"devices"});
    EXPECT_EQ(devices.exit_code, 0) << devices.err;
    EXPECT_TRUE(contains(devices.out, "no GPU"));

    const CliRun submit =
        kerntune(server, {"submit", "gemm", "--shape", "m=96,n=80,k=40", "--dtype", "bf16",
                          "--mode", "compile", "--arch", "sm_90a", "--budget", "2", "--wait"});
    ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err << daemon.log();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(submit.out, match, std::regex("job (\\d+) done"))) << submit.out;
    job_id = match[1];
    EXPECT_TRUE(contains(submit.err, "variants"));  // the progress line
    EXPECT_TRUE(contains(submit.err, "compiled"));
    // The summary counts the configs that went through the gates, and the pruned apart.
    EXPECT_TRUE(std::regex_search(
        submit.out,
        std::regex(R"(\(\d+ configs? through the gates; \d+ pruned or for another arch\))")))
        << submit.out;
    EXPECT_FALSE(contains(submit.out, " pruned, ")) << submit.out;

    // plan: the same job before it runs, counted per template, with an estimate now that this
    // daemon has compiled something; nothing is queued.
    const CliRun plan =
        kerntune(server, {"plan", "gemm", "--shape", "m=96,n=80,k=40", "--dtype", "bf16", "--mode",
                          "compile", "--arch", "sm_90a", "--budget", "2"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_TRUE(contains(plan.out, "FEASIBLE")) << plan.out;
    EXPECT_TRUE(std::regex_search(
        plan.out, std::regex(R"(\d+ feasible configs?, \d+ pruned; the job runs 2)")))
        << plan.out;
    EXPECT_TRUE(contains(plan.out, "estimated: ")) << plan.out;
    EXPECT_TRUE(contains(plan.out, "pruned by (the largest counts):")) << plan.out;
    const CliRun plan_json =
        kerntune(server, {"--json", "plan", "gemm", "--shape", "m=96,n=80,k=40", "--dtype", "bf16",
                          "--mode", "compile", "--arch", "sm_90a"});
    ASSERT_EQ(plan_json.exit_code, 0) << plan_json.err;
    const nlohmann::json preview = nlohmann::json::parse(plan_json.out);
    std::int64_t feasible = 0;
    for (const auto& t : preview["templates"]) feasible += t["feasible"].get<std::int64_t>();
    EXPECT_EQ(preview["feasible"], feasible);
    EXPECT_EQ(preview["to_run"], feasible);  // no budget: all of them
    EXPECT_GT(preview["rates"]["compile_seconds_each"].get<double>(), 0);

    const CliRun history = kerntune(server, {"history"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_TRUE(contains(history.out, "done"));
    EXPECT_TRUE(contains(history.out, "M=96 N=80 K=40"));
    EXPECT_TRUE(contains(history.out, "sm_90a"));

    const CliRun show = kerntune(server, {"show", job_id});
    EXPECT_EQ(show.exit_code, 0) << show.err;
    EXPECT_TRUE(contains(show.out, "job " + job_id + ": done"));
    EXPECT_TRUE(contains(show.out, "regs"));
    EXPECT_TRUE(contains(show.out, "compiled"));

    const CliRun json = kerntune(server, {"--json", "history"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto jobs = nlohmann::json::parse(json.out)["jobs"];
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0]["id"].dump(), job_id);

    // Errors: a clear message and a non-zero exit code.
    const CliRun tune =
        kerntune(server, {"submit", "gemm", "--shape", "m=64,n=64,k=64", "--dtype", "bf16"});
    EXPECT_EQ(tune.exit_code, 1);
    EXPECT_TRUE(contains(tune.err, "no GPU on this host"));
    // The hint in the CLI's words, not the API's.
    EXPECT_TRUE(contains(tune.err, "use --mode compile --arch sm_90a")) << tune.err;
    EXPECT_FALSE(contains(tune.err, "\"mode\"")) << tune.err;
    const CliRun best =
        kerntune(server, {"best", "gemm", "--shape", "M=96,N=80,K=40", "--dtype", "bf16"});
    EXPECT_EQ(best.exit_code, 1);
    EXPECT_TRUE(contains(best.err, "nothing tuned for"));
    EXPECT_TRUE(contains(best.err, "--nearest answers")) << best.err;
    EXPECT_TRUE(contains(best.err, "--tune-on-miss starts a job")) << best.err;
    const CliRun missing = kerntune(server, {"show", "99999"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no job 99999"));
    const CliRun bad_shape =
        kerntune(server, {"submit", "gemm", "--shape", "m=64,n=sixty", "--dtype", "bf16"});
    EXPECT_NE(bad_shape.exit_code, 0);
    EXPECT_TRUE(contains(bad_shape.err, "integer"));

    EXPECT_EQ(daemon.signal_and_wait(SIGTERM), 0) << daemon.log();  // a clean stop
  }
  {
    Daemon daemon(dir_.path(), db_, "second");
    ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
    const CliRun history = kerntune(daemon.url(), {"history"});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_TRUE(contains(history.out, "done"));
    EXPECT_TRUE(contains(history.out, "M=96 N=80 K=40"));
    const CliRun show = kerntune(daemon.url(), {"show", job_id});
    EXPECT_EQ(show.exit_code, 0) << show.err;

    const std::string url = daemon.url();
    daemon.signal_and_wait(SIGKILL);
    const CliRun gone = kerntune(url, {"history"});
    EXPECT_EQ(gone.exit_code, 3);
    EXPECT_TRUE(contains(gone.err, "cannot reach kerntuned at " + url));
  }
}

// The exit codes the README documents: 0 success, 1 refused by the server or bad arguments,
// 2 `submit --wait` ended with the job failed or cancelled, 3 daemon unreachable (tested above).
// Each mistake says what would have been right.
// kerntune family add DIR: the worked example registered in its manifest's dim order (and a
// second time: unchanged), a copy that does not compile refused with NVRTC's log (exit 1), one
// whose reference kernel does not compile refused with that log, and a daemon without
// --allow-user-families refusing with the option named.
TEST_F(CliTest, FamilyAddRegistersAFolderAndShowsWhyOneIsRefused) {
  const std::string example =
      (test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm").string();
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db_,
                                  dir_.path() / "kerntuned-families.log",
                                  {"--families", (test::source_dir() / "kernel_templates").string(),
                                   "--allow-user-families"});
    ASSERT_TRUE(daemon.healthy_within(30s)) << daemon.log();
    const CliRun added = kerntune(daemon.url(), {"family", "add", example});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    EXPECT_TRUE(contains(added.out, "family wmma_gemm registered"));
    EXPECT_TRUE(contains(added.out, "compiled for sm_80"));
    EXPECT_TRUE(contains(added.err, "compiling one variant"));
    // Its dims as the manifest lists them (M, N, K: what a positional --shape means), not sorted.
    std::vector<std::string> dims;
    const nlohmann::json listed = Client(daemon.url()).families();  // kept: the loop reads into it
    for (const auto& family : listed["families"])
      if (family["name"] == "wmma_gemm")
        for (const auto& dim : family["dims"]) dims.push_back(dim["name"]);
    EXPECT_EQ(dims, (std::vector<std::string>{"M", "N", "K"}));
    const CliRun again = kerntune(daemon.url(), {"family", "add", example});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(contains(again.out, "already registered"));
    EXPECT_TRUE(contains(kerntune(daemon.url(), {"families"}).out, "wmma_gemm"));

    const auto broken = dir_.path() / "broken_wmma";
    std::filesystem::create_directories(broken);
    for (const char* file : {"manifest.json", "wmma_gemm.cuh", "wmma_gemm_reference.cuh"})
      std::filesystem::copy_file(std::filesystem::path(example) / file, broken / file);
    std::ofstream(broken / "wmma_gemm.cuh", std::ios::app) << "\nnot_cuda_at_all;\n";
    const CliRun refused = kerntune(daemon.url(), {"family", "add", broken.string()});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_TRUE(contains(refused.err, "did not compile"));
    EXPECT_TRUE(contains(refused.err, "NVRTC log"));
    EXPECT_TRUE(contains(refused.err, "not_cuda_at_all"));
    std::filesystem::copy_file(std::filesystem::path(example) / "wmma_gemm.cuh",
                               broken / "wmma_gemm.cuh",
                               std::filesystem::copy_options::overwrite_existing);
    std::ofstream(broken / "wmma_gemm_reference.cuh", std::ios::app) << "\nnot_a_reference;\n";
    const CliRun bad_reference = kerntune(daemon.url(), {"family", "add", broken.string()});
    EXPECT_EQ(bad_reference.exit_code, 1);
    EXPECT_TRUE(contains(bad_reference.err, "reference kernel wmma_gemm_reference"));
    EXPECT_TRUE(contains(bad_reference.err, "NVRTC log of the reference kernel"));
    EXPECT_TRUE(contains(bad_reference.err, "not_a_reference"));
    const CliRun missing =
        kerntune(daemon.url(), {"family", "add", (dir_.path() / "none").string()});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "manifest.json"));
  }
  Daemon plain(dir_.path(), db_, "plain");
  ASSERT_TRUE(plain.healthy_within(30s)) << plain.log();
  const CliRun off = kerntune(plain.url(), {"family", "add", example});
  EXPECT_EQ(off.exit_code, 1);
  EXPECT_TRUE(contains(off.err, "--allow-user-families"));
  EXPECT_TRUE(contains(off.err, "HTTP 403"));
}

// A file of the folder that is a link out of it is not sent: the user never meant to share it.
TEST_F(CliTest, FamilyAddRefusesALinkOutOfTheFolderBeforeSendingAnything) {
  const auto example = test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm";
  const auto folder = dir_.path() / "linked";
  std::filesystem::create_directories(folder);
  for (const char* file : {"manifest.json", "wmma_gemm.cuh", "wmma_gemm_reference.cuh"})
    std::filesystem::copy_file(example / file, folder / file);
  std::filesystem::create_symlink("/etc/hostname", folder / "leak.h");
  // No daemon listens there: the refusal comes before any request.
  const CliRun refused = kerntune("http://127.0.0.1:9", {"family", "add", folder.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_TRUE(contains(refused.err, "leak.h is a symbolic link to /etc/hostname"));
  EXPECT_TRUE(contains(refused.err, "not uploaded"));
}

TEST_F(CliTest, UserMistakesGetClearMessagesAndTheDocumentedExitCodes) {
  Daemon daemon(dir_.path(), db_, "mistakes");
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  const std::string server = daemon.url();
  const std::vector<std::string> compile = {"--dtype", "bf16", "--mode", "compile"};
  auto submit = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    args.insert(args.end(), compile.begin(), compile.end());
    return kerntune(server, args);
  };

  // Extents alone follow the family's dim order; the job options of the API are flags.
  const CliRun ok = kerntune(
      server, {"--json", "submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90a", "--budget",
               "1", "--pipeline", "serial", "--wait", "--dtype", "bf16", "--mode", "compile"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err << daemon.log();
  const auto job = nlohmann::json::parse(ok.out);
  EXPECT_EQ(job["shape"], (nlohmann::json{{"M", 96}, {"N", 80}, {"K", 40}}));
  EXPECT_EQ(job["pipeline"], "serial");
  EXPECT_EQ(job["status"], "done");

  struct Mistake {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Mistake> mistakes{
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90", "--dtype", "bf16", "--mode",
        "compile"},
       "did you mean sm_90a?"},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_91", "--dtype", "bf16", "--mode",
        "compile"},
       "known archs: sm_80"},
      {{"submit", "gemmm", "--shape", "96x80x40", "--arch", "sm_90a", "--dtype", "bf16", "--mode",
        "compile"},
       "unknown family 'gemmm' (did you mean gemm?); known families: "},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm90a", "--dtype", "bf16", "--mode",
        "compile"},
       "unknown arch 'sm90a' (did you mean sm_90a?)"},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90a", "--dtype", "bfloat16",
        "--mode", "compile"},
       "has no dtype 'bfloat16' (did you mean bf16?)"},
      {{"submit", "gemm", "--shape", "96x80", "--arch", "sm_90a", "--dtype", "bf16", "--mode",
        "compile"},
       "in this order: MxNxK"},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90a", "--dtype", "bf16", "--mode",
        "compile", "--configs", R"([{"BM":7}])"},
       "invalid_configs"},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90a", "--dtype", "bf16", "--mode",
        "compile", "--configs", "[{"},
       "--configs is not JSON"},
      {{"submit", "gemm", "--shape", "96x80x40", "--arch", "sm_90a", "--dtype", "bf16", "--mode",
        "compile", "--pipeline", "fast"},
       "--pipeline"},
      {{"history", "--family", "typo"}, "unknown family 'typo'"},
      {{"best", "gemm", "--shape", "96x80x40", "--dtype", "bf16"}, "nothing tuned for"},
      {{"history", "--colour", "red"}, "--colour"},
      {{"submit", "gemm", "--shape", "96x80x40", "--dtype", "bf16", "--budget", "-3"},
       "--budget: must be 0 or more (0: the whole space), not -3"},
      {{"tune-all", "missing-shapes.jsonl"}, "cannot read the shapes file missing-shapes.jsonl"},
      {{"launch"}, "launch"},
  };
  for (const Mistake& mistake : mistakes) {
    const CliRun run = kerntune(server, mistake.args);
    SCOPED_TRACE(mistake.args.front() + " " + mistake.says);
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.out + run.err, mistake.says));
  }
  // The history holds the one job that was accepted: no mistake left an empty one behind.
  const CliRun history = kerntune(server, {"--json", "history"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(nlohmann::json::parse(history.out)["jobs"].size(), 1u);
  EXPECT_EQ(kerntune(server, {"--help"}).exit_code, 0);

  // 2: the job waited for was cancelled (a whole-space compile job runs for minutes).
  const auto out = dir_.path() / "wait.out";
  const pid_t waiting = test::spawn(
      {(test::binary_dir() / "kerntune").string(), "--server", server, "submit", "gemm", "--shape",
       "m=128,n=128,k=64", "--dtype", "bf16", "--mode", "compile", "--arch", "sm_90a", "--wait"},
      out, dir_.path() / "wait.err");
  std::string id;
  for (int i = 0; i < 300 && id.empty(); ++i) {
    std::this_thread::sleep_for(100ms);
    const auto jobs = Client(server).history({"", "", 10, 0})["jobs"];
    for (const auto& entry : jobs)
      if (entry["id"] != job["id"]) id = entry["id"].dump();
  }
  ASSERT_FALSE(id.empty()) << daemon.log();
  // `kerntune wait` follows the same job from another process, over its event stream.
  const auto follower_out = dir_.path() / "follow.out";
  const auto follower_err = dir_.path() / "follow.err";
  const pid_t follower =
      test::spawn({(test::binary_dir() / "kerntune").string(), "--server", server, "wait", id},
                  follower_out, follower_err);
  // Both are following the job, each on an event stream, when it is cancelled.
  const HttpTransport metrics(parse_server_url(server), 10s, "");
  EXPECT_TRUE(test::eventually([&] {
    return test::parse_exposition(
               metrics.send(http::verb::get, "/metrics").body)["kerntune_event_streams_open"] >= 2;
  })) << daemon.log();
  const CliRun cancel = kerntune(server, {"cancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(test::wait_exit(waiting, 120s).value_or(-1), 2)
      << test::read_text(out) << test::read_text(dir_.path() / "wait.err");
  EXPECT_TRUE(contains(test::read_text(out), "job " + id + " cancelled"));
  EXPECT_EQ(test::wait_exit(follower, 120s).value_or(-1), 2) << test::read_text(follower_err);
  EXPECT_TRUE(contains(test::read_text(follower_out), "job " + id + " cancelled"));
  // Neither fell back to polling: the progress came from the stream.
  for (const auto& err : {dir_.path() / "wait.err", follower_err})
    EXPECT_EQ(test::read_text(err).find("polling instead"), std::string::npos)
        << test::read_text(err);

  // A finished job: its summary at once, exit code 0 for done; an unknown one: 1.
  const CliRun done = kerntune(server, {"wait", job["id"].dump()});
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_TRUE(contains(done.out, "job " + job["id"].dump() + " done"));
  const CliRun unknown = kerntune(server, {"wait", "999999"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "no job 999999"));
}

// Ctrl-C while `submit --wait` follows a job: exit 130, and the words say the job goes on in the
// daemon and how to follow or stop it; the job is indeed still there, running.
TEST_F(CliTest, CtrlCWhileWaitingSaysTheJobGoesOnAndHowToStopIt) {
  Daemon daemon(dir_.path(), db_, "interrupt");
  ASSERT_TRUE(daemon.healthy_within(120s)) << daemon.log();
  const std::string server = daemon.url();
  const auto out = dir_.path() / "interrupted.out";
  const auto err = dir_.path() / "interrupted.err";
  // A whole-space compile job: minutes of compiling, so it is running when the signal comes.
  const pid_t waiting = test::spawn(
      {(test::binary_dir() / "kerntune").string(), "--server", server, "submit", "gemm", "--shape",
       "m=128,n=128,k=64", "--dtype", "bf16", "--mode", "compile", "--arch", "sm_90a", "--wait"},
      out, err);
  std::string id;
  ASSERT_TRUE(test::eventually([&] {
    const auto jobs = Client(server).history({"", "", 10, 0})["jobs"];
    if (!jobs.empty()) id = jobs[0]["id"].dump();
    return !id.empty() && test::read_text(err).find("job " + id) != std::string::npos;
  })) << daemon.log();
  ASSERT_EQ(kill(waiting, SIGINT), 0);
  EXPECT_EQ(test::wait_exit(waiting, 60s).value_or(-1), 130) << test::read_text(err);
  const std::string words = test::read_text(err);
  EXPECT_TRUE(contains(words, "job " + id + " goes on in the daemon"));
  EXPECT_TRUE(contains(words, "`kerntune wait " + id + "` follows it again"));
  EXPECT_TRUE(contains(words, "`kerntune cancel " + id + "` stops it"));
  const std::string status = Client(server).job(std::stoll(id))["status"];
  EXPECT_TRUE(status == "queued" || status == "running") << status;
  // Once its space is planned (variants pending), a cancel leaves those unrun: counted as
  // cancelled in /metrics.
  EXPECT_TRUE(test::eventually([&] {
    const nlohmann::json job = Client(server).job(std::stoll(id));
    return job["progress"]["by_status"].value("pending", 0) > 0;
  })) << daemon.log();
  EXPECT_EQ(kerntune(server, {"cancel", id}).exit_code, 0);
  const HttpTransport metrics(parse_server_url(server), 10s, "");
  EXPECT_TRUE(test::eventually([&] {
    return test::parse_exposition(metrics.send(http::verb::get, "/metrics")
                                      .body)["kerntune_variants_total{outcome=\"cancelled\"}"] > 0;
  })) << daemon.log();
}

}  // namespace
}  // namespace kt
