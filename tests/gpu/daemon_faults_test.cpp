// The whole daemon on a real GPU: kerntuned started as a child process with the test-only
// "faults" family (tests/support/fault_family.*), jobs submitted over HTTP as a user would. A job
// whose variants compile-error, ask for too many threads, fail to launch, access illegal memory,
// hang and compute wrong next to correct ones must leave every variant in its state with a
// reason, measure every good one, and leave the daemon serving. With two or more GPUs of one model
// a job's variants spread over them and two jobs run at once.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "client/client_error.hpp"
#include "client/kerntune_client.hpp"
#include "harness/daemon_process.hpp"
#include "support/fault_family.hpp"
#include "support/gpu_fixture.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
namespace http = boost::beast::http;
using test::PlantedFault;

// Ragged against every block shape of the family; grid.x = 13 blocks of 16 is no multiple of the
// bad cluster's 3 (the smoke shape's 3 blocks are, so that variant fails at the full shape).
const nlohmann::json kShape = {{"M", 257}, {"N", 193}, {"K", 136}};

nlohmann::json config(PlantedFault fault, int copy = 0) {
  return {{"BEHAVIOUR", static_cast<std::int64_t>(fault)}, {"COPY", copy}};
}

std::string job_body(const nlohmann::json& configs, const std::string& pipeline = "pipelined") {
  return nlohmann::json{{"family", "faults"}, {"shape", kShape},      {"dtype", "bf16"},
                        {"mode", "tune"},     {"pipeline", pipeline}, {"configs", configs}}
      .dump();
}

// Needs no GPU: the family loads, spans 9 x 4 variants, and only the planted #error fails NVRTC.
TEST(FaultFamily, LoadsAndOnlyThePlantedErrorFailsToCompile) {
  test::TempDir dir;
  test::write_fault_family(dir.path());
  const Family family = load_family(dir.path() / "faults");
  const DeviceLimits limits = *limits_for_arch("sm_90a");
  const Shape shape{{"M", 257}, {"N", 193}, {"K", 136}};
  const auto plans = enumerate_variants(family, shape, "bf16", limits);
  ASSERT_EQ(plans.size(), 36u);
  for (const VariantPlan& plan : plans) {
    EXPECT_FALSE(plan.pruned_by.has_value()) << *plan.pruned_by;
    if (plan.config.at("COPY") != 0) continue;
    const CompileResult result =
        compile_kernel(compile_request(family, *plan.tmpl, plan.config, "bf16", limits));
    const bool planted_error =
        plan.config.at("BEHAVIOUR") == static_cast<std::int64_t>(PlantedFault::compile_error);
    EXPECT_EQ(result.ok, !planted_error) << canonical_key(plan.config) << ":\n" << result.log;
    if (planted_error) {
      EXPECT_NE(result.log.find("planted compile error"), std::string::npos);
    }
  }
}

class DaemonOnGpu : public test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    test::write_fault_family(dir_.path() / "families");
    daemon_ = std::make_unique<harness::DaemonProcess>(
        test::binary_dir() / "kerntuned", dir_.path() / "kerntune.db",
        dir_.path() / "kerntuned.log",
        std::vector<std::string>{"--families", (dir_.path() / "families").string(), "--worker",
                                 (test::binary_dir() / "kerntune-worker").string(),
                                 "--compile-threads", "4"});
    daemon_->wait_healthy(180s);
    client_ = std::make_unique<Client>(daemon_->url(), 60s);
  }

  std::int64_t submit(const std::string& body) {
    const nlohmann::json job = client_->call(http::verb::post, "/v1/jobs", body);
    return job.at("id").get<std::int64_t>();
  }

  nlohmann::json wait_until_finished(std::int64_t id, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      nlohmann::json job = client_->job(id);
      const std::string status = job["status"];
      if (status != "queued" && status != "running") return job;
      if (std::chrono::steady_clock::now() > deadline || !daemon_->alive()) {
        ADD_FAILURE() << "job " << id << " still " << status << "\n" << daemon_->log_tail();
        return job;
      }
      std::this_thread::sleep_for(250ms);
    }
  }

  // The job's variants by BEHAVIOUR (COPY 0 only).
  std::map<PlantedFault, nlohmann::json> variants_by_fault(std::int64_t id) {
    std::map<PlantedFault, nlohmann::json> out;
    // The listing must outlive the loop: a range-for over a member of a temporary dangles.
    const nlohmann::json listing = client_->variants(id, /*with_log=*/true);
    for (const auto& v : listing["variants"])
      if (v["config"]["COPY"] == 0)
        out[static_cast<PlantedFault>(v["config"]["BEHAVIOUR"].get<std::int64_t>())] = v;
    return out;
  }

  test::TempDir dir_;
  std::unique_ptr<harness::DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

TEST_F(DaemonOnGpu, EveryPlantedFaultEndsInItsStateAndEveryGoodVariantIsMeasured) {
  nlohmann::json configs = nlohmann::json::array();
  for (int b = 0; b < test::kPlantedFaultCount; ++b)
    configs.push_back(config(static_cast<PlantedFault>(b)));
  const std::int64_t id = submit(job_body(configs));
  const nlohmann::json job = wait_until_finished(id, 600s);
  ASSERT_EQ(job["status"], "done") << job.dump(2) << "\n" << daemon_->log_tail();
  EXPECT_TRUE(daemon_->alive());
  EXPECT_EQ(client_->health()["status"], "ok");
  ASSERT_TRUE(job["reference_us"].is_number()) << job.dump(2);

  const auto variants = variants_by_fault(id);
  ASSERT_EQ(variants.size(), static_cast<std::size_t>(test::kPlantedFaultCount))
      << daemon_->log_tail();
  std::set<std::int64_t> measured_ids;
  for (const auto& [fault, v] : variants) {
    SCOPED_TRACE(v.dump(2));
    EXPECT_EQ(v["status"], test::expected_status(fault));
    // Every variant that compiled reports its registers; 0 or null would be a lost report.
    if (fault != PlantedFault::compile_error) {
      EXPECT_TRUE(v["registers"].is_number_integer() && v["registers"].get<int>() > 0)
          << "registers " << v["registers"];
    }
    if (v["status"] == "measured") {
      measured_ids.insert(v["id"].get<std::int64_t>());
      EXPECT_GT(v["median_us"].get<double>(), 0);
      const nlohmann::json& timing = v["timing"];
      ASSERT_TRUE(timing.is_object());
      EXPECT_TRUE(timing["method"] == "events" || timing["method"] == "graph") << timing["method"];
      EXPECT_LE(timing["min_us"].get<double>(), timing["median_us"].get<double>());
      EXPECT_LE(timing["median_us"].get<double>(), timing["p90_us"].get<double>());
      EXPECT_TRUE(v["error"].is_object());
      EXPECT_TRUE(v["gpu_ordinal"].is_number_integer());
      EXPECT_GT(v["measure_ms"].get<double>(), 0);
      EXPECT_TRUE(v["speedup"].is_number() && v["speedup"].get<double>() > 0)
          << "speedup " << v["speedup"];
    } else {
      EXPECT_TRUE(v["reason"].is_string());
      EXPECT_FALSE(v["reason"].get<std::string>().empty());
    }
  }
  EXPECT_NE(variants.at(PlantedFault::compile_error)["compile_log"].get<std::string>().find(
                "planted compile error"),
            std::string::npos);
  EXPECT_EQ(variants.at(PlantedFault::too_many_threads)["failed_gate"], "resources");
  const auto& wrong = variants.at(PlantedFault::wrong_result);
  ASSERT_TRUE(wrong["error"].is_object());
  EXPECT_GT(wrong["error"]["max_abs"].get<double>(), 0);
  EXPECT_GE(wrong["error"]["first_bad_index"].get<std::int64_t>(), 0);
  EXPECT_LT(wrong["error"]["first_bad_index"].get<std::int64_t>(), 257 * 193)
      << "an index into C, at most the full shape's";
  // A variant that reached a worker says which GPU saw it, the faulty ones too.
  EXPECT_TRUE(variants.at(PlantedFault::hang)["gpu_ordinal"].is_number_integer());
  EXPECT_TRUE(variants.at(PlantedFault::illegal_access)["gpu_ordinal"].is_number_integer());

  EXPECT_EQ(measured_ids.size(), 3u);
  EXPECT_EQ(job["stats"]["variants_measured"], 3);
  EXPECT_EQ(job["stats"]["variants_finished"], test::kPlantedFaultCount);
  EXPECT_GT(job["stats"]["wall_seconds"].get<double>(), 0);
  EXPECT_GT(job["stats"]["gpu_busy_seconds"].get<double>(), 0);
  ASSERT_TRUE(job["stats"]["gpu_idle_fraction"].is_number());
  {
    // Idle is what the GPUs' capacity over the job's wall time left unused by its measurements.
    const double busy = job["stats"]["gpu_busy_seconds"].get<double>();
    const double capacity = job["stats"]["wall_seconds"].get<double>() * job["gpus"].get<int>();
    const double idle = job["stats"]["gpu_idle_fraction"].get<double>();
    EXPECT_NEAR(idle, std::clamp(1.0 - busy / capacity, 0.0, 1.0), 1e-6);
    EXPECT_LT(idle, 1.0) << "the GPUs measured something";
  }
  EXPECT_EQ(job["gpus"], same_model_gpus());
  // Three measured variants: the top ones were re-measured interleaved.
  ASSERT_TRUE(job["comparison"].is_object()) << job.dump(2);
  EXPECT_TRUE(measured_ids.count(job["comparison"]["winner_variant_id"].get<std::int64_t>()));
  EXPECT_TRUE(measured_ids.count(job["comparison"]["runner_up_variant_id"].get<std::int64_t>()));
  // ... beside the baseline (this family names none: its reference's own-dtype run stands in).
  const nlohmann::json& final = job["comparison"]["final"];
  ASSERT_TRUE(final.is_object()) << job.dump(2);
  EXPECT_EQ(final["variant_ids"].size(), 3u);
  ASSERT_EQ(final["speedups"].size(), 3u);
  EXPECT_TRUE(final["baseline_timing"]["median_us"].get<double>() > 0);
  EXPECT_EQ(final["baseline"]["kind"], "cublas_gemm");
  for (const auto& s : final["speedups"])
    EXPECT_TRUE(s["low"].get<double>() <= s["value"].get<double>() &&
                s["value"].get<double>() <= s["high"].get<double>())
        << s;
  ASSERT_TRUE(job["best"]["final"].is_object());
  EXPECT_EQ(job["best"]["id"], final["winner_variant_id"]);

  // The daemon still tunes after all that: a serial job of one good config.
  const std::int64_t again =
      submit(job_body(nlohmann::json::array({config(PlantedFault::correct, 1)}), "serial"));
  const nlohmann::json second = wait_until_finished(again, 300s);
  ASSERT_EQ(second["status"], "done") << second.dump(2) << "\n" << daemon_->log_tail();
  EXPECT_EQ(second["pipeline"], "serial");
  EXPECT_EQ(second["gpus"], 1);
  EXPECT_EQ(second["stats"]["variants_measured"], 1);
  // One measured variant: no runner-up to settle, but still compared with the baseline.
  ASSERT_TRUE(second["comparison"].is_object()) << second.dump(2);
  EXPECT_TRUE(second["comparison"]["runner_up_variant_id"].is_null());
  EXPECT_EQ(second["comparison"]["final"]["speedups"].size(), 1u);
  EXPECT_TRUE(second["best"]["final"]["speedup"].is_number());
}

// A check-mode job (what a predicted answer's check runs) checks its pinned configs on the GPU
// like a tune job's variants, tells a right one from a wrong one, and no answer rests on it.
TEST_F(DaemonOnGpu, ACheckJobTellsARightConfigFromAWrongOneAndAnswersNothing) {
  nlohmann::json body = nlohmann::json::parse(job_body(nlohmann::json::array(
      {config(PlantedFault::correct, 2), config(PlantedFault::wrong_result, 2)})));
  body["mode"] = "check";
  const std::int64_t id = submit(body.dump());
  const nlohmann::json job = wait_until_finished(id, 300s);
  ASSERT_EQ(job["status"], "done") << job.dump(2) << "\n" << daemon_->log_tail();
  EXPECT_EQ(job["mode"], "check");
  EXPECT_TRUE(job["comparison"].is_null()) << "a check runs no final comparison: " << job.dump(2);
  std::map<std::int64_t, std::string> status_of;
  const nlohmann::json listing = client_->variants(id, false);
  for (const auto& v : listing["variants"])
    status_of[v["config"]["BEHAVIOUR"].get<std::int64_t>()] = v["status"];
  EXPECT_EQ(status_of[static_cast<std::int64_t>(PlantedFault::correct)], "measured");
  EXPECT_EQ(status_of[static_cast<std::int64_t>(PlantedFault::wrong_result)], "wrong_result");
  try {
    client_->call(http::verb::get, "/v1/best?family=faults&dtype=bf16&M=257&N=193&K=136");
    ADD_FAILURE() << "a measured variant of a check job became the shape's answer";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.status(), 404) << e.what();
  }
}

TEST_F(DaemonOnGpu, OneJobSpreadsOverEveryGpuOfItsModelAndTwoJobsRunAtOnce) {
  if (same_model_gpus() < 2) GTEST_SKIP() << "needs two GPUs of the same model";
  nlohmann::json configs = nlohmann::json::array();
  for (PlantedFault fault :
       {PlantedFault::correct, PlantedFault::correct_wide, PlantedFault::correct_tall})
    for (int copy = 0; copy < 4; ++copy) configs.push_back(config(fault, copy));
  const auto ordinals_of = [&](std::int64_t id) {
    std::set<int> ordinals;
    const nlohmann::json listing = client_->variants(id);
    for (const auto& v : listing["variants"])
      if (v["gpu_ordinal"].is_number_integer()) ordinals.insert(v["gpu_ordinal"].get<int>());
    return ordinals;
  };

  // Alone, one job's variants go to every GPU of its model.
  const nlohmann::json alone = wait_until_finished(submit(job_body(configs)), 600s);
  ASSERT_EQ(alone["status"], "done") << alone.dump(2);
  EXPECT_EQ(alone["gpus"], same_model_gpus());
  EXPECT_EQ(alone["stats"]["variants_measured"], 12) << alone.dump(2);
  EXPECT_GE(ordinals_of(alone["id"].get<std::int64_t>()).size(), 2u) << "ran on one GPU only";

  // Two jobs submitted together run at once (each may get either GPU as they take turns).
  const std::int64_t first = submit(job_body(configs));
  const std::int64_t second = submit(job_body(configs));
  const nlohmann::json a = wait_until_finished(first, 600s);
  const nlohmann::json b = wait_until_finished(second, 600s);
  ASSERT_EQ(a["status"], "done") << a.dump(2);
  ASSERT_EQ(b["status"], "done") << b.dump(2);
  for (const nlohmann::json* job : {&a, &b}) {
    EXPECT_EQ((*job)["stats"]["variants_measured"], 12) << job->dump(2);
    EXPECT_EQ((*job)["gpus"], same_model_gpus());
  }
  std::set<int> both = ordinals_of(first);
  both.merge(ordinals_of(second));
  EXPECT_GE(both.size(), 2u) << "two jobs at once used one GPU only";
  // Overlap (ISO 8601 strings compare): each started before the other finished.
  EXPECT_LT(b["started_at"].get<std::string>(), a["finished_at"].get<std::string>());
  EXPECT_LT(a["started_at"].get<std::string>(), b["finished_at"].get<std::string>());
}

}  // namespace
}  // namespace kt
