// GET /v1/best?predict=1 through the API handlers (router, real Store, the shipped families, no
// sockets): a shape nobody tuned answers with the shape predictor's config, flagged "predicted",
// fitted here on the committed recorded spaces (engine/shape_predictors.hpp); without a model it
// stays a 404 that says why; with tune_on_miss it also queues the job. The predicted config is
// checked on a GPU of the model (a check-mode job) where the daemon has one, else compiled only.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "engine/predicted_checks.hpp"
#include "engine/shape_predictors.hpp"
#include "support/fake_gpu.hpp"
#include "support/routed_app_test.hpp"
#include "support/schema_check.hpp"
#include "support/store_fixtures.hpp"
#include "tuner/search/recorded_space_file.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

// The committed spaces whose file names start with `prefix`.
std::vector<RecordedSpace> committed_spaces(const std::string& prefix) {
  std::vector<RecordedSpace> spaces;
  for (const auto& file :
       recorded_space_files({(test::source_dir() / "tests/data/spaces-2026-12").string()}))
    if (file.filename().string().rfind(prefix, 0) == 0) spaces.push_back(load_recorded_space(file));
  return spaces;
}

std::vector<RecordedSpace> committed_gemm_spaces() {
  return committed_spaces("gemm-bf16-");
}

// The handlers with shape predictors fitted on the committed GEMM spaces (or `spaces`) and at most
// two open checks, on a host with `devices`.
class PredictorAppTest : public test::RoutedAppTest {
 protected:
  PredictorAppTest(std::vector<DeviceInfo> devices, std::string device_error,
                   std::vector<RecordedSpace> spaces = committed_gemm_spaces())
      : RoutedAppTest(std::move(devices), std::move(device_error)),
        predictors_(store_, families_, std::move(spaces)),
        checks_(store_, scheduler_, 2) {
    predictors_.refit_all();
    context_.predictors = &predictors_;
    context_.predicted_checks = &checks_;
  }
  ShapePredictors predictors_;
  PredictedChecks checks_;
};

class PredictedAnswerTest : public PredictorAppTest {
 protected:
  // One (fake) H100: its limits prune the predicted config, and tune_on_miss can queue a job.
  PredictedAnswerTest() : PredictorAppTest({test::fake_h100()}, "") {}
};

TEST_F(PredictedAnswerTest, AnUntunedShapeGetsThePredictorsConfigFlaggedAsPredicted) {
  const auto model = predictors_.model("gemm", "bf16");
  ASSERT_NE(model, nullptr);
  std::set<Shape> shapes;  // the committed spaces' shapes, each GPU model's recording counted once
  for (const RecordedSpace& s : committed_gemm_spaces()) shapes.insert(s.shape);
  ASSERT_GE(shapes.size(), 4u);
  EXPECT_EQ(model->shapes, shapes.size());
  EXPECT_GT(model->variants, 2000u);

  const ApiResponse r =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1");
  ASSERT_EQ(r.status, HttpStatus::ok) << r.body;
  const nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["source"], "predicted");
  EXPECT_EQ(j["shape"]["M"], 333);
  EXPECT_FALSE(j["template"].get<std::string>().empty());
  const double expected = j["expected_us"].get<double>();
  EXPECT_GT(expected, 0);
  EXPECT_LE(j["expected_interval_us"][0].get<double>(), expected);
  EXPECT_GE(j["expected_interval_us"][1].get<double>(), expected);
  EXPECT_GT(j["model"]["candidates_ranked"].get<int>(), 100);
  ASSERT_TRUE(j["launch"].is_object()) << "how to launch it for the asked shape";
  EXPECT_TRUE(j["launch"]["grid"].is_array());
  // The config is one of the shape's feasible ones: a job of the shape plans it.
  const ApiResponse plan = call(http::verb::post, "/v1/jobs?dry_run=1",
                                R"({"family":"gemm","dtype":"bf16","mode":"compile","arch":"sm_90a",
                                    "shape":{"M":333,"N":4096,"K":4096},"configs":[)" +
                                    nlohmann::json(j["config"])
                                        .dump()
                                        .insert(1, "\"template\":" + j["template"].dump() + ",") +
                                    "]}");
  ASSERT_EQ(plan.status, HttpStatus::ok) << plan.body;
  EXPECT_EQ(nlohmann::json::parse(plan.body)["to_run"], 1) << plan.body;
}

// The first prediction of a config for a shape queues its check: on a daemon with a GPU of the
// model, a check-mode job of the shape pinned to it on that GPU; asking again reports that job
// instead of queueing another.
TEST_F(PredictedAnswerTest, APredictedConfigGetsOneCheckOnAGpuOfItsModel) {
  const std::string ask = "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1";
  const nlohmann::json first = nlohmann::json::parse(call(http::verb::get, ask).body);
  ASSERT_EQ(first["source"], "predicted") << first;
  const nlohmann::json& check = first["check"];
  EXPECT_EQ(check["kind"], "gpu");
  EXPECT_EQ(check["status"], "queued") << check;
  // The answer does not wait for the store: the checks' own thread stores the job, and a later
  // answer carries its id.
  checks_.flush();
  const nlohmann::json stored = nlohmann::json::parse(call(http::verb::get, ask).body)["check"];
  EXPECT_EQ(stored["status"], "queued") << stored;
  ASSERT_TRUE(stored["job_id"].is_number_integer()) << stored;
  EXPECT_EQ(job_count(), 1u);
  const auto job = store_.job(stored["job_id"].get<std::int64_t>());
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->mode, JobMode::check);
  EXPECT_EQ(job->arch, "sm_90a");
  EXPECT_EQ(job->device_name, test::kFakeH100Name);
  EXPECT_EQ(job->device_uuid, "GPU-aaaa-0000");
  EXPECT_EQ(job->shape, (Shape{{"M", 333}, {"N", 4096}, {"K", 4096}}));
  const nlohmann::json pinned = nlohmann::json::parse(job->pinned_configs_json);
  ASSERT_EQ(pinned.size(), 1u) << "pinned to the predicted config alone: " << pinned;
  EXPECT_EQ(pinned[0]["template"], first["template"]);
  EXPECT_EQ(pinned[0]["config"], first["config"]);

  const nlohmann::json again = nlohmann::json::parse(call(http::verb::get, ask).body);
  EXPECT_EQ(again["check"]["job_id"], stored["job_id"]);
  EXPECT_EQ(job_count(), 1u) << "one check per config and shape";
  // Checks are bounded: with two open, a third shape's prediction is answered unchecked.
  call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=334&N=4096&K=4096&predict=1");
  checks_.flush();
  const nlohmann::json third = nlohmann::json::parse(
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=335&N=4096&K=4096&predict=1").body);
  EXPECT_EQ(third["check"]["status"], "not_checked") << third["check"];
  EXPECT_TRUE(third["check"]["job_id"].is_null());
  EXPECT_EQ(job_count(), 2u);
}

// The check job's outcome is the answer's: right on the GPU gives "checked" with its time and
// error, and it ranks on no front, so the shape is still untuned; a wrong result gives "failed".
TEST_F(PredictedAnswerTest, TheGpuChecksOutcomeIsCarriedAndTheShapeStaysUntuned) {
  const auto finish_check = [&](const std::string& ask, const VariantOutcome& outcome) {
    call(http::verb::get, ask);
    checks_.flush();
    const nlohmann::json queued = nlohmann::json::parse(call(http::verb::get, ask).body)["check"];
    const std::int64_t job_id = queued["job_id"].get<std::int64_t>();
    // What the runner does with the job (no scheduler runs here): its pinned config planned,
    // compiled and given its outcome on the GPU.
    store_.set_job_status(job_id, JobStatus::running);
    const nlohmann::json pinned =
        nlohmann::json::parse(store_.job(job_id)->pinned_configs_json).at(0);
    VariantRecord plan;
    plan.template_name = pinned["template"];
    for (const auto& [axis, value] : pinned["config"].items()) plan.config[axis] = value;
    plan.config_key = canonical_key(plan.config);
    const std::int64_t variant_id = store_.plan_variants(job_id, {plan}).at(0).id;
    store_.record_compile(variant_id, test::compiled(96, 1024), 384, 0);
    store_.record_outcome(variant_id, outcome);
    store_.set_job_status(job_id, JobStatus::done);
    return nlohmann::json::parse(call(http::verb::get, ask).body);
  };
  const std::string right = "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1";
  const nlohmann::json checked = finish_check(right, test::measured(42.5, 0.002));
  const nlohmann::json& check = checked["check"];
  EXPECT_EQ(check["status"], "checked") << check;
  EXPECT_EQ(check["kind"], "gpu");
  EXPECT_DOUBLE_EQ(check["measured_us"].get<double>(), 42.5);
  EXPECT_DOUBLE_EQ(check["max_rel_error"].get<double>(), 0.002);
  EXPECT_EQ(check["device_model"], test::kFakeH100Name);
  EXPECT_EQ(check["registers"], 96);
  EXPECT_TRUE(check["reason"].is_null());
  EXPECT_EQ(checked["source"], "predicted") << "a check is no tuning: still a prediction";
  const ApiResponse plain =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096");
  EXPECT_EQ(plain.status, HttpStatus::not_found) << "no answer rests on a check: " << plain.body;

  VariantOutcome wrong;
  wrong.status = VariantStatus::wrong_result;
  wrong.failed_gate = "validation";
  wrong.reason = "12 elements outside the tolerance";
  const nlohmann::json failed =
      finish_check("/v1/best?family=gemm&dtype=bf16&M=334&N=4096&K=4096&predict=1", wrong);
  EXPECT_EQ(failed["check"]["status"], "failed") << failed["check"];
  EXPECT_NE(failed["check"]["reason"].get<std::string>().find("12 elements outside"),
            std::string::npos)
      << failed["check"];
  EXPECT_TRUE(failed["check"]["measured_us"].is_null());
}

// A daemon without a GPU of the asked model checks the predicted config by compiling it alone.
class PredictedAnswerWithoutGpuTest : public PredictorAppTest {
 protected:
  PredictedAnswerWithoutGpuTest() : PredictorAppTest({}, "libcuda.so.1 not found") {}
};

TEST_F(PredictedAnswerWithoutGpuTest, APredictedConfigGetsACompileOnlyCheck) {
  const std::string ask = "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1";
  const nlohmann::json first = nlohmann::json::parse(call(http::verb::get, ask).body);
  ASSERT_EQ(first["source"], "predicted") << first;
  EXPECT_EQ(first["check"]["kind"], "compile-only");
  checks_.flush();
  const nlohmann::json stored = nlohmann::json::parse(call(http::verb::get, ask).body)["check"];
  ASSERT_TRUE(stored["job_id"].is_number_integer()) << stored;
  const auto job = store_.job(stored["job_id"].get<std::int64_t>());
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->mode, JobMode::compile);
  EXPECT_EQ(job->arch, "sm_90a");
  EXPECT_TRUE(stored["device_model"].is_null());
}

TEST_F(PredictedAnswerTest, WithoutAModelAMissStaysA404ThatSaysWhy) {
  const ApiResponse r = call(http::verb::get,
                             "/v1/best?family=attention_fwd&dtype=fp16&B=1&H=8&S=1024&D=128&"
                             "CAUSAL=0&predict=1");
  ASSERT_EQ(r.status, HttpStatus::not_found) << r.body;
  EXPECT_NE(r.body.find("no shape predictor for attention_fwd fp16"), std::string::npos) << r.body;
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(PredictedAnswerTest, TuneOnMissQueuesTheJobAndAnswersWithThePredictionMeanwhile) {
  const ApiResponse r = call(http::verb::get,
                             "/v1/best?family=gemm&dtype=bf16&M=77&N=1024&K=512&predict=1&"
                             "tune_on_miss=1");
  ASSERT_EQ(r.status, HttpStatus::accepted) << r.body;
  const nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["answer"]["source"], "predicted");
  // The tune job the miss asked for, and the predicted config's compile check beside it.
  EXPECT_EQ(job_count(), 2u);
  const auto tune = store_.job(j["job"]["id"].get<std::int64_t>());
  ASSERT_TRUE(tune.has_value()) << j;
  EXPECT_EQ(tune->mode, JobMode::tune);
  EXPECT_NE(j["answer"]["check"]["job_id"], j["job"]["id"]) << j;
}

// The predicted body is what docs/openapi.json documents (its Predicted schema allows no other
// field), as the 200 answer of /v1/best and as the answer beside a queued job.
TEST_F(PredictedAnswerTest, ThePredictedBodyIsTheDocumentedOne) {
  const nlohmann::json document = test::committed_openapi_document();
  const nlohmann::json& predicted_schema = document["components"]["schemas"]["Predicted"];
  const nlohmann::json& best_200 = document["paths"]["/v1/best"]["get"]["responses"]["200"]
                                           ["content"]["application/json"]["schema"];
  const ApiResponse r =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=1");
  ASSERT_EQ(r.status, HttpStatus::ok) << r.body;
  nlohmann::json body = nlohmann::json::parse(r.body);
  for (const auto& v : test::schema_violations(document, predicted_schema, body))
    ADD_FAILURE() << "Predicted: " << v;
  for (const auto& v : test::schema_violations(document, best_200, body))
    ADD_FAILURE() << "/v1/best 200: " << v;
  const ApiResponse queued =
      call(http::verb::get,
           "/v1/best?family=gemm&dtype=bf16&M=77&N=1024&K=512&predict=1&tune_on_miss=1");
  ASSERT_EQ(queued.status, HttpStatus::accepted) << queued.body;
  const nlohmann::json answer = nlohmann::json::parse(queued.body)["answer"];
  EXPECT_TRUE(test::schema_violations(document, predicted_schema, answer).empty()) << answer;
  // The schema is strict enough to notice a field it does not name, or one gone.
  body["undocumented"] = 1;
  EXPECT_FALSE(test::schema_violations(document, predicted_schema, body).empty());
  body.erase("undocumented");
  body.erase("expected_us");
  EXPECT_FALSE(test::schema_violations(document, predicted_schema, body).empty());
}

TEST_F(PredictedAnswerTest, ABadFlagValueIsA400) {
  const ApiResponse r =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=maybe");
  EXPECT_EQ(r.status, HttpStatus::bad_request) << r.body;
}

// A model that ranks nothing: no config of the dual GEMM's space fits K = 64 (every template's
// k-tile is larger), which the answer says, rather than that there is no model.
class DualPredictedAnswerTest : public PredictorAppTest {
 protected:
  DualPredictedAnswerTest()
      : PredictorAppTest({}, "libcuda.so.1 not found", committed_spaces("dual_gemm_silu-bf16-")) {}
};

TEST_F(DualPredictedAnswerTest, AShapeNoConfigFitsIsA404ThatSaysSoNotThatThereIsNoModel) {
  ASSERT_NE(predictors_.model("dual_gemm_silu", "bf16"), nullptr);
  const ApiResponse r = call(
      http::verb::get, "/v1/best?family=dual_gemm_silu&dtype=bf16&G=1&M=64&N=64&K=64&predict=1");
  ASSERT_EQ(r.status, HttpStatus::not_found) << r.body;
  EXPECT_NE(r.body.find("no config of dual_gemm_silu's space fits the shape"), std::string::npos)
      << r.body;
  EXPECT_EQ(r.body.find("no shape predictor"), std::string::npos) << r.body;
  EXPECT_EQ(job_count(), 0u);
  const ApiResponse fits = call(
      http::verb::get, "/v1/best?family=dual_gemm_silu&dtype=bf16&G=1&M=64&N=64&K=128&predict=1");
  EXPECT_EQ(fits.status, HttpStatus::ok) << fits.body;
}

}  // namespace
}  // namespace kt
