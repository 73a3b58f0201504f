// GET /v1/best?predict=1 through the API handlers (router, real Store, the shipped families, no
// sockets): a shape nobody tuned answers with the shape predictor's config, flagged "predicted",
// fitted here on the committed recorded spaces (engine/shape_predictors.hpp); without a model it
// stays a 404 that says why; with tune_on_miss it also queues the job.
#include <gtest/gtest.h>

#include "engine/shape_predictors.hpp"
#include "support/fake_gpu.hpp"
#include "support/routed_app_test.hpp"
#include "tuner/search/recorded_space_file.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

std::vector<RecordedSpace> committed_gemm_spaces() {
  std::vector<RecordedSpace> spaces;
  for (const auto& file :
       recorded_space_files({(test::source_dir() / "tests/data/spaces-2026-12").string()}))
    if (file.filename().string().rfind("gemm-bf16-", 0) == 0)
      spaces.push_back(load_recorded_space(file));
  return spaces;
}

class PredictedAnswerTest : public test::RoutedAppTest {
 protected:
  // One (fake) H100: its limits prune the predicted config, and tune_on_miss can queue a job.
  PredictedAnswerTest()
      : RoutedAppTest({test::fake_h100()}, ""),
        predictors_(store_, families_, committed_gemm_spaces()) {
    predictors_.refit_all();
    context_.predictors = &predictors_;
  }
  ShapePredictors predictors_;
};

TEST_F(PredictedAnswerTest, AnUntunedShapeGetsThePredictorsConfigFlaggedAsPredicted) {
  const auto model = predictors_.model("gemm", "bf16");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->shapes, 4u);
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
  EXPECT_EQ(job_count(), 0u) << "a prediction queues nothing by itself";
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
  EXPECT_EQ(job_count(), 1u);
}

TEST_F(PredictedAnswerTest, ABadFlagValueIsA400) {
  const ApiResponse r =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=333&N=4096&K=4096&predict=maybe");
  EXPECT_EQ(r.status, HttpStatus::bad_request) << r.body;
}

}  // namespace
}  // namespace kt
