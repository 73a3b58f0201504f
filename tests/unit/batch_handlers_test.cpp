// Batches through the API handlers (router, real Store, real families, a pretended H100 whose
// scheduler never starts, so submitted jobs stay queued): POST /v1/batches orders by share, folds
// repeats, skips what is tuned and current, joins what is already being tuned, refuses per problem
// what a job would be refused; GET shows each problem's job and answer; DELETE cancels only the
// batch's own jobs; bad input is a 4xx that stores nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "db/store.hpp"
#include "engine/batch_submission.hpp"
#include "support/fake_gpu.hpp"
#include "support/routed_app_test.hpp"
#include "support/store_fixtures.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

const std::string kH100 = "NVIDIA H100 80GB HBM3";

using test::fake_h100;

nlohmann::json gemm(std::int64_t m, std::int64_t n, std::int64_t k, double share,
                    std::int64_t calls = 1) {
  return {{"family", "gemm"},
          {"shape", {{"M", m}, {"N", n}, {"K", k}}},
          {"dtype", "bf16"},
          {"share", share},
          {"calls", calls}};
}

class BatchHandlersTest : public test::RoutedAppTest {
 protected:
  explicit BatchHandlersTest(std::vector<DeviceInfo> devices = {fake_h100()})
      : RoutedAppTest(devices, devices.empty() ? "libcuda.so.1 not found" : "") {}

  ApiResponse post(const nlohmann::json& body) {
    return call(http::verb::post, "/v1/batches", body.dump());
  }
  std::int64_t batch_count() { return store_.batch_page(1000, 0).batches.size(); }

  // A finished tune job of a GEMM shape on the H100, keyed as the daemon keys it now unless
  // family_hash says otherwise.
  std::int64_t tuned(const Shape& shape, const std::string& family_hash = "") {
    NewJob job = test::tune_job(kH100);
    job.shape = shape;
    job.device_uuid = "GPU-aaaa-0000";
    job.driver_version = 13000;
    job.nvrtc_version = nvrtc_version();
    job.family_hash = family_hash.empty() ? families_.find("gemm")->source_hash : family_hash;
    const auto id = store_.create_job(job);
    std::vector<VariantRecord> planned(1);
    planned[0].template_name = "mma_multistage";
    planned[0].config = {{"BM", 128}, {"BN", 128}};
    planned[0].config_key = canonical_key(planned[0].config);
    const auto rows = store_.plan_variants(id, planned);
    store_.record_outcome(rows[0].id, test::measured(100.0, 0.001));
    store_.set_job_status(id, JobStatus::running);
    store_.set_job_status(id, JobStatus::done);
    return id;
  }
};

TEST_F(BatchHandlersTest, RunsTheLargestShareFirstSkipsTheTunedAndRefusesPerProblem) {
  const std::int64_t before = tuned({{"M", 256}, {"N", 256}, {"K", 128}});
  tuned({{"M", 512}, {"N", 256}, {"K", 128}}, "0123456789abcdef");  // stale: its sources changed
  const auto response = post(
      {{"problems",
        {gemm(256, 256, 128, 0.1),
         gemm(77, 4096, 4096, 0.3, 2),
         gemm(512, 256, 128, 0.2),
         gemm(77, 4096, 4096, 0.25, 3),
         {{"family", "gemm"}, {"shape", {{"M", 64}, {"N", 64}}}, {"dtype", "bf16"}, {"share", 0.4}},
         {{"family", "gemmx"}, {"shape", {{"M", 64}}}, {"dtype", "bf16"}}}},
       {"budget_per_shape", 8},
       {"label", "decoder"}});
  ASSERT_EQ(response.status, HttpStatus::created) << response.body;
  const nlohmann::json batch = response.json();
  EXPECT_EQ(batch["label"], "decoder");
  EXPECT_EQ(batch["device_model"], kH100);
  EXPECT_EQ(batch["status"], "running");
  const nlohmann::json& problems = batch["problems"];
  ASSERT_EQ(problems.size(), 5u) << batch.dump(1);  // the two 77x4096x4096 entries are one
  // Largest share first: the refused 64x64 (0.4), then 77x4096 (0.3 + 0.25), 512 (stale), 256.
  EXPECT_EQ(problems[0]["plan"], "refused");
  EXPECT_EQ(problems[0]["error"]["code"], "invalid_shape");
  EXPECT_EQ(problems[1]["shape"]["M"], 77);
  EXPECT_DOUBLE_EQ(problems[1]["share"].get<double>(), 0.55);
  EXPECT_EQ(problems[1]["calls"], 5);
  EXPECT_EQ(problems[1]["plan"], "submitted");
  EXPECT_EQ(problems[1]["job"]["status"], "queued");
  EXPECT_EQ(problems[1]["job"]["budget"], 8);
  EXPECT_EQ(problems[2]["shape"]["M"], 512);
  EXPECT_EQ(problems[2]["plan"], "submitted");
  EXPECT_EQ(problems[2]["note"], "stale (family_hash changed)");
  EXPECT_EQ(problems[3]["plan"], "tuned");
  EXPECT_EQ(problems[3]["job_id"], before);
  EXPECT_EQ(problems[3]["answer"]["answer"], "ours");
  EXPECT_DOUBLE_EQ(problems[3]["answer"]["median_us"].get<double>(), 100.0);
  EXPECT_EQ(problems[4]["plan"], "refused");
  EXPECT_EQ(problems[4]["error"]["code"], "unknown_family");
  EXPECT_EQ(batch["counts"]["problems"], 5);
  EXPECT_EQ(batch["counts"]["queued"], 2);
  EXPECT_EQ(batch["counts"]["tuned_before"], 1);
  EXPECT_EQ(batch["counts"]["refused"], 2);
  EXPECT_EQ(batch["counts"]["answered"], 1);
  // The jobs were submitted in the batch's order: the larger share has the smaller id.
  EXPECT_LT(problems[1]["job_id"].get<std::int64_t>(), problems[2]["job_id"].get<std::int64_t>());
  const auto location = std::find_if(response.headers.begin(), response.headers.end(),
                                     [](const auto& h) { return h.first == "Location"; });
  ASSERT_NE(location, response.headers.end());
  const auto again = call(http::verb::get, location->second);
  ASSERT_EQ(again.status, HttpStatus::ok);
  EXPECT_EQ(again.json()["problems"], problems);

  // A second batch of the same problems waits on the queued jobs rather than queueing them twice.
  const auto second = post({{"problems", {gemm(77, 4096, 4096, 0.5)}}});
  ASSERT_EQ(second.status, HttpStatus::created) << second.body;
  EXPECT_EQ(second.json()["problems"][0]["plan"], "joined");
  EXPECT_EQ(second.json()["problems"][0]["job_id"], problems[1]["job_id"]);
  EXPECT_EQ(second.json()["budget_per_shape"], 64);  // the default
  EXPECT_EQ(job_count(), 4u);                        // two tuned before, two submitted
}

TEST_F(BatchHandlersTest, CancelEndsTheBatchsOwnJobsAndLeavesTheJoinedOnes) {
  const auto first = post({{"problems", {gemm(77, 4096, 4096, 0.5)}}}).json();
  const auto second = post({{"problems", {gemm(77, 4096, 4096, 0.5), gemm(96, 4096, 4096, 0.4)}}});
  ASSERT_EQ(second.status, HttpStatus::created) << second.body;
  const std::string path = "/v1/batches/" + std::to_string(second.json()["id"].get<int>());
  const auto cancelled = call(http::verb::delete_, path);
  ASSERT_EQ(cancelled.status, HttpStatus::ok) << cancelled.body;
  EXPECT_EQ(cancelled.json()["cancel_requested"], true);
  EXPECT_EQ(cancelled.json()["status"], "cancelled");
  EXPECT_EQ(cancelled.json()["problems"][1]["job"]["status"], "cancelled");
  // The joined job belongs to the first batch: still queued.
  EXPECT_EQ(cancelled.json()["problems"][0]["plan"], "joined");
  EXPECT_EQ(cancelled.json()["problems"][0]["job"]["status"], "queued");
  EXPECT_EQ(store_.job(first["problems"][0]["job_id"].get<std::int64_t>())->status,
            JobStatus::queued);
  const auto twice = call(http::verb::delete_, path);
  EXPECT_EQ(twice.status, HttpStatus::conflict);
  EXPECT_EQ(twice.json()["error"]["code"], "batch_finished");

  const auto list = call(http::verb::get, "/v1/batches?limit=1").json();
  ASSERT_EQ(list["batches"].size(), 1u);
  EXPECT_EQ(list["batches"][0]["id"], second.json()["id"]);
  EXPECT_FALSE(list["batches"][0].contains("problems"));
  ASSERT_TRUE(list["next"].is_string());
  const auto rest =
      call(http::verb::get, "/v1/batches?limit=1&cursor=" + list["next"].get<std::string>());
  ASSERT_EQ(rest.json()["batches"].size(), 1u);
  EXPECT_EQ(rest.json()["batches"][0]["id"], first["id"]);
  EXPECT_TRUE(rest.json()["next"].is_null());
}

TEST_F(BatchHandlersTest, DryRunPlansAndStoresNothing) {
  tuned({{"M", 256}, {"N", 256}, {"K", 128}});
  const auto response = post(
      {{"problems", {gemm(256, 256, 128, 0.1), gemm(77, 4096, 4096, 0.3)}}, {"dry_run", true}});
  ASSERT_EQ(response.status, HttpStatus::ok) << response.body;
  EXPECT_TRUE(response.json()["id"].is_null());
  EXPECT_EQ(response.json()["status"], "planned");
  EXPECT_EQ(response.json()["problems"][0]["plan"], "submitted");
  EXPECT_TRUE(response.json()["problems"][0]["job_id"].is_null());
  EXPECT_EQ(response.json()["problems"][1]["plan"], "tuned");
  EXPECT_EQ(job_count(), 1u);
  EXPECT_EQ(batch_count(), 0);
  // retune: the tuned one is planned again.
  const auto retune =
      post({{"problems", {gemm(256, 256, 128, 0.1)}}, {"dry_run", true}, {"retune", true}});
  EXPECT_EQ(retune.json()["problems"][0]["plan"], "submitted");
}

TEST_F(BatchHandlersTest, BadInputIsA4xxThatStoresNothing) {
  const std::vector<std::pair<nlohmann::json, std::string>> bad{
      {nlohmann::json::array(), "invalid_field"},
      {{{"problems", nlohmann::json::array()}}, "invalid_field"},
      {{{"problems", {gemm(64, 64, 64, 0.1)}}, {"budget", 3}}, "unknown_field"},
      {{{"problems", {{{"family", "gemm"}, {"shape", {{"M", "x"}}}, {"dtype", "bf16"}}}}},
       "invalid_field"},
      {{{"problems", {{{"family", "gemm"}, {"shape", {{"M", 1}}}, {"dtype", "bf16"}, {"op", 1}}}}},
       "unknown_field"},
      {{{"problems", {gemm(64, 64, 64, 1.5)}}}, "invalid_field"},
      {{{"problems", {gemm(64, 64, 64, 0.1)}}, {"budget_per_shape", -1}}, "invalid_budget"},
      {{{"problems", {gemm(64, 64, 64, 0.1)}}, {"retune", "yes"}}, "invalid_field"},
      {{{"problems", {{{"family", "gemmx"}, {"shape", {{"M", 1}}}, {"dtype", "bf16"}}}}},
       "unknown_family"},
  };
  for (const auto& [body, code] : bad) {
    const auto response = post(body);
    EXPECT_GE(static_cast<int>(response.status), 400) << body.dump();
    EXPECT_LT(static_cast<int>(response.status), 500) << body.dump();
    EXPECT_EQ(response.json()["error"]["code"], code) << body.dump() << " -> " << response.body;
  }
  const nlohmann::json many = {{"problems", nlohmann::json::array()}};
  nlohmann::json too_many = many;
  for (int i = 0; i < 1025; ++i) too_many["problems"].push_back(gemm(64 + i, 64, 64, 0));
  EXPECT_EQ(post(too_many).status, HttpStatus::bad_request);
  EXPECT_EQ(call(http::verb::get, "/v1/batches/999").status, HttpStatus::not_found);
  EXPECT_EQ(call(http::verb::get, "/v1/batches/x").status, HttpStatus::bad_request);
  EXPECT_EQ(call(http::verb::get, "/v1/batches?limit=0").status, HttpStatus::bad_request);
  EXPECT_EQ(job_count(), 0u);
  EXPECT_EQ(batch_count(), 0);
}

TEST_F(BatchHandlersTest, TheDaemonCancelsWhatIsLeftOnceItsMinutesRunOut) {
  const auto response = post({{"problems", {gemm(77, 4096, 4096, 0.5), gemm(96, 4096, 4096, 0.2)}},
                              {"minutes", 0.0005}});  // 30 ms
  ASSERT_EQ(response.status, HttpStatus::created) << response.body;
  EXPECT_DOUBLE_EQ(response.json()["minutes"].get<double>(), 0.0005);
  EXPECT_TRUE(response.json()["deadline_ms"].is_number_integer());
  EXPECT_EQ(response.json()["status"], "running");
  const auto none = post({{"problems", {gemm(128, 4096, 4096, 0.5)}}});  // no deadline
  EXPECT_TRUE(none.json()["deadline_ms"].is_null());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(cancel_batches_past_deadline(store_, scheduler_), 1);  // what the heartbeat runs
  const auto after =
      call(http::verb::get, "/v1/batches/" + std::to_string(response.json()["id"].get<int>()));
  EXPECT_EQ(after.json()["status"], "cancelled");
  EXPECT_EQ(after.json()["counts"]["cancelled"], 2);
  EXPECT_EQ(cancel_batches_past_deadline(store_, scheduler_), 0);  // once
  EXPECT_EQ(store_.job(none.json()["problems"][0]["job_id"].get<std::int64_t>())->status,
            JobStatus::queued);
  for (const nlohmann::json& minutes :
       {nlohmann::json(0), nlohmann::json(-1), nlohmann::json("5")}) {
    const auto bad = post({{"problems", {gemm(64, 64, 64, 0.1)}}, {"minutes", minutes}});
    EXPECT_EQ(bad.status, HttpStatus::unprocessable_entity) << minutes;
    EXPECT_EQ(bad.json()["error"]["code"], "invalid_minutes");
  }
}

class BatchWithoutGpuTest : public BatchHandlersTest {
 protected:
  BatchWithoutGpuTest() : BatchHandlersTest({}) {}
};

TEST_F(BatchWithoutGpuTest, WhatIsTunedIsAnsweredAndTheRestIsRefusedForWantOfAGpu) {
  store_.upsert_device(fake_h100());  // the GPU a run on another host left in the store
  const std::int64_t before = tuned({{"M", 256}, {"N", 256}, {"K", 128}});
  const auto response = post(
      {{"problems", {gemm(256, 256, 128, 0.1), gemm(77, 4096, 4096, 0.3)}}, {"device", "H100"}});
  ASSERT_EQ(response.status, HttpStatus::created) << response.body;
  EXPECT_EQ(response.json()["device_model"], kH100);  // as the store knows the selector
  EXPECT_EQ(response.json()["problems"][0]["error"]["code"], "no_device");
  EXPECT_EQ(response.json()["problems"][1]["job_id"], before);
  EXPECT_EQ(response.json()["status"], "failed");  // ended, one problem without an answer
  const auto none = post({{"problems", {gemm(77, 4096, 4096, 0.3)}}});
  EXPECT_EQ(none.status, HttpStatus::service_unavailable);
  EXPECT_EQ(none.json()["error"]["code"], "no_device");
  EXPECT_EQ(batch_count(), 1);
}

}  // namespace
}  // namespace kt
