// Issue 15, knowledge across shapes, through the API handlers (router, real Store, real families,
// no sockets): /v1/best's nearest=1, tune_on_miss=1 and retune_stale=1, stale results flagged in
// every view, and a job warm-started from a nearby tuned shape.
#include <cmath>

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/api_routes.hpp"
#include "server/app_context.hpp"
#include "support/fake_gpu.hpp"
#include "support/routed_app_test.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

const std::string kH100 = "NVIDIA H100 80GB HBM3";

using test::fake_h100;

// The scheduler is built but never started: handlers only enqueue, nothing compiles here.
class KnowledgeHandlersTest : public test::RoutedAppTest {
 protected:
  explicit KnowledgeHandlersTest(std::vector<DeviceInfo> devices = {})
      : RoutedAppTest(devices, devices.empty() ? "no driver" : "") {}

  ApiResponse get(const std::string& target) { return call(http::verb::get, target); }

  // A finished tune job of a GEMM shape on the H100 with two measured variants (100 and 120 us),
  // keyed as the daemon keys it now unless `keys` says otherwise.
  std::int64_t tuned(const Shape& shape) { return tuned(shape, current_job()); }
  std::int64_t tuned(const Shape& shape, const NewJob& keys) {
    NewJob job = keys;
    job.family = "gemm";
    job.shape = shape;
    job.dtype = "bf16";
    job.mode = JobMode::tune;
    job.arch = "sm_90a";
    job.device_uuid = "GPU-aaaa-0000";
    job.device_name = kH100;
    const auto id = store_.create_job(job);
    std::vector<VariantRecord> planned(2);
    planned[0].template_name = planned[1].template_name = "mma_multistage";
    planned[0].config = {{"BM", 128}, {"BN", 128}};
    planned[1].config = {{"BM", 64}, {"BN", 128}};
    for (auto& v : planned) v.config_key = canonical_key(v.config);
    const auto rows = store_.plan_variants(id, planned);
    for (std::size_t i = 0; i < rows.size(); ++i)
      store_.record_outcome(rows[i].id, test::measured(i == 0 ? 100.0 : 120.0, 0.001));
    store_.set_job_status(id, JobStatus::running);
    store_.set_job_status(id, JobStatus::done);
    return id;
  }
  NewJob current_job() const {
    NewJob job;
    job.driver_version = context_.devices.empty() ? 0 : context_.devices[0].driver_version;
    job.nvrtc_version = nvrtc_version();
    job.family_hash = families_.find("gemm")->source_hash;
    return job;
  }
};

const Shape kTuned{{"M", 256}, {"N", 256}, {"K", 128}};
const std::string kBest = "/v1/best?family=gemm&dtype=bf16";
const std::string kTunedQuery = kBest + "&M=256&N=256&K=128";
const std::string kMissQuery = kBest + "&M=1024&N=256&K=128";  // 4x M: distance log 4

TEST_F(KnowledgeHandlersTest, BadFlagValuesAre400NamingTheParameter) {
  for (const std::string flag : {"nearest", "tune_on_miss", "retune_stale"}) {
    const auto response = get(kMissQuery + "&" + flag + "=yes");
    EXPECT_EQ(response.status, HttpStatus::bad_request) << response.body;
    EXPECT_EQ(response.json()["error"]["code"], "invalid_parameter");
    EXPECT_NE(response.json()["error"]["message"].get<std::string>().find("'" + flag + "'"),
              std::string::npos)
        << response.body;
  }
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(KnowledgeHandlersTest, NearestAnswersAMissWithTheNearestTunedShapeFlagged) {
  const auto tuned_job = tuned(kTuned);
  tuned({{"M", 8192}, {"N", 256}, {"K", 128}});  // farther: log 32

  const auto exact = get(kTunedQuery + "&nearest=1");
  ASSERT_EQ(exact.status, HttpStatus::ok) << exact.body;
  EXPECT_EQ(exact.json()["exact"], true);
  EXPECT_TRUE(exact.json()["nearest"].is_null());
  EXPECT_EQ(exact.json()["stale"], false);

  // Without nearest=1 a miss stays a 404, and says how to ask for more.
  const auto miss = get(kMissQuery);
  EXPECT_EQ(miss.status, HttpStatus::not_found);
  EXPECT_NE(miss.json()["error"]["message"].get<std::string>().find("nearest=1"),
            std::string::npos);

  const auto near = get(kMissQuery + "&nearest=1");
  ASSERT_EQ(near.status, HttpStatus::ok) << near.body;
  const auto body = near.json();
  EXPECT_EQ(body["exact"], false);
  EXPECT_EQ(body["job_id"], tuned_job);
  EXPECT_EQ(body["best_own"]["config"], (nlohmann::json{{"BM", 128}, {"BN", 128}}));
  EXPECT_EQ(body["nearest"]["shape_key"], canonical_key(kTuned));
  EXPECT_EQ(body["nearest"]["shape"], (nlohmann::json{{"K", 128}, {"M", 256}, {"N", 256}}));
  EXPECT_NEAR(body["nearest"]["distance"].get<double>(), std::log(4.0), 1e-12);
  EXPECT_EQ(body["nearest"]["asked_shape_key"], "K=128,M=1024,N=256");

  // Another dtype or model has no neighbour: still 404.
  EXPECT_EQ(get(kBest + "&M=1024&N=256&K=128&device=NVIDIA%20B200&nearest=1").status,
            HttpStatus::not_found);
  EXPECT_EQ(get("/v1/best?family=gemm&dtype=fp16&M=1024&N=256&K=128&nearest=1").status,
            HttpStatus::not_found);
  EXPECT_EQ(job_count(), 2u);
}

TEST_F(KnowledgeHandlersTest, TuneOnMissWithoutAGpuIsRefusedLikeAJob) {
  tuned(kTuned);
  const auto response = get(kMissQuery + "&tune_on_miss=1&nearest=1");
  EXPECT_EQ(response.status, HttpStatus::service_unavailable) << response.body;
  EXPECT_EQ(response.json()["error"]["code"], "no_device");
  EXPECT_EQ(job_count(), 1u);
  // A hit needs no job.
  EXPECT_EQ(get(kTunedQuery + "&tune_on_miss=1").status, HttpStatus::ok);
}

TEST_F(KnowledgeHandlersTest, ResultsOfAnotherFamilySourceAreStaleInEveryView) {
  NewJob old_keys = current_job();
  old_keys.family_hash = "0123456789abcdef";
  const auto id = tuned(kTuned, old_keys);
  const auto best = get(kTunedQuery).json();
  EXPECT_EQ(best["stale"], true);
  ASSERT_EQ(best["stale_keys"].size(), 1u);
  EXPECT_EQ(best["stale_keys"][0]["key"], "family_hash");
  EXPECT_EQ(best["stale_keys"][0]["stored"], "0123456789abcdef");
  EXPECT_EQ(best["stale_keys"][0]["current"], families_.find("gemm")->source_hash);
  EXPECT_EQ(best["keys"]["nvrtc_version"], nvrtc_version());
  EXPECT_TRUE(best["keys"]["driver_version"].is_null());
  EXPECT_EQ(best["exact"], true);

  const auto job = get("/v1/jobs/" + std::to_string(id)).json();
  EXPECT_EQ(job["stale"], true);
  EXPECT_EQ(job["stale_keys"][0]["key"], "family_hash");
  const auto history = get("/v1/history").json();
  EXPECT_EQ(history["jobs"][0]["stale"], true);

  // A job older than the keys is not called stale on a guess.
  const auto unkeyed = tuned({{"M", 512}, {"N", 256}, {"K", 128}}, NewJob{});
  EXPECT_EQ(get(kBest + "&M=512&N=256&K=128").json()["stale"], false);
  EXPECT_EQ(get("/v1/jobs/" + std::to_string(unkeyed)).json()["keys"]["family_hash"], nullptr);
}

class KnowledgeWithGpuTest : public KnowledgeHandlersTest {
 protected:
  KnowledgeWithGpuTest() : KnowledgeHandlersTest({fake_h100(13000)}) {}
};

TEST_F(KnowledgeWithGpuTest, TuneOnMissQueuesOneJobAndAnswersWithItAndTheNearest) {
  tuned(kTuned);
  const auto first = get(kMissQuery + "&tune_on_miss=1");
  ASSERT_EQ(first.status, HttpStatus::accepted) << first.body;
  const auto body = first.json();
  const auto job_id = body["job"]["id"].get<std::int64_t>();
  EXPECT_EQ(body["link"], "/v1/jobs/" + std::to_string(job_id));
  EXPECT_EQ(body["new_job"], true);
  EXPECT_TRUE(body["answer"].is_null()) << "nearest was not asked for";
  EXPECT_EQ(body["job"]["shape_key"], "K=128,M=1024,N=256");
  EXPECT_EQ(body["job"]["status"], "queued");
  EXPECT_EQ(body["job"]["device_name"], kH100);
  EXPECT_EQ(body["job"]["keys"]["driver_version"], 13000);
  EXPECT_EQ(body["job"]["search"]["name"], "exhaustive") << "POST /v1/jobs's default";

  // Asked again while it is queued: the same job, and the nearest answer beside it.
  const auto again = get(kMissQuery + "&tune_on_miss=1&nearest=1");
  ASSERT_EQ(again.status, HttpStatus::accepted) << again.body;
  EXPECT_EQ(again.json()["job"]["id"], job_id);
  EXPECT_EQ(again.json()["new_job"], false);
  EXPECT_EQ(again.json()["answer"]["exact"], false);
  EXPECT_EQ(again.json()["answer"]["nearest"]["shape_key"], canonical_key(kTuned));
  EXPECT_EQ(job_count(), 2u);
}

TEST_F(KnowledgeWithGpuTest, AStaleResultIsServedFlaggedAndRetunedOnRequest) {
  NewJob old_driver = current_job();
  old_driver.driver_version = 12080;
  tuned(kTuned, old_driver);
  const auto served = get(kTunedQuery);
  ASSERT_EQ(served.status, HttpStatus::ok);
  EXPECT_EQ(served.json()["stale"], true);
  EXPECT_EQ(served.json()["stale_keys"][0]["key"], "driver_version");
  EXPECT_EQ(served.json()["stale_keys"][0]["stored"], "12080");
  EXPECT_EQ(served.json()["stale_keys"][0]["current"], "13000");

  const auto retune = get(kTunedQuery + "&retune_stale=1");
  ASSERT_EQ(retune.status, HttpStatus::accepted) << retune.body;
  EXPECT_EQ(retune.json()["new_job"], true);
  EXPECT_EQ(retune.json()["answer"]["stale"], true) << "the stale answer is still given";
  EXPECT_EQ(retune.json()["job"]["shape_key"], canonical_key(kTuned));
  EXPECT_EQ(retune.json()["job"]["keys"]["driver_version"], 13000);
  EXPECT_EQ(get(kTunedQuery + "&retune_stale=1").json()["new_job"], false);
  EXPECT_EQ(job_count(), 2u);

  // A fresh result is answered 200 even with retune_stale=1.
  tuned({{"M", 512}, {"N", 256}, {"K", 128}});
  EXPECT_EQ(get(kBest + "&M=512&N=256&K=128&retune_stale=1").status, HttpStatus::ok);
}

TEST_F(KnowledgeWithGpuTest, ALearningJobNearATunedShapeIsWarmStartedAndSaysFromWhere) {
  tuned(kTuned);
  const auto response =
      call(http::verb::post, "/v1/jobs",
           R"({"family":"gemm","shape":{"M":512,"N":256,"K":128},"dtype":"bf16","budget":20})");
  ASSERT_EQ(response.status, HttpStatus::accepted) << response.body;
  const auto job = response.json();
  // The default searcher: with no shape predictor here it runs as local, warm-started.
  EXPECT_EQ(job["search"]["name"], "predicted");
  ASSERT_TRUE(job["warm_start"].is_object()) << response.body;
  EXPECT_EQ(job["warm_start"]["from"][0]["shape_key"], canonical_key(kTuned));
  EXPECT_NEAR(job["warm_start"]["from"][0]["distance"].get<double>(), std::log(2.0), 1e-12);
  EXPECT_EQ(job["warm_start"]["seeds"][0]["config"], (nlohmann::json{{"BM", 128}, {"BN", 128}}));
  EXPECT_EQ(job["warm_start"]["seeds"].size(), 2u);
  const auto stored = get("/v1/jobs/" + job["id"].dump()).json();
  EXPECT_EQ(stored["warm_start"], job["warm_start"]);

  // Opted out, or a searcher that does not learn: no warm start.
  const auto cold = call(http::verb::post, "/v1/jobs",
                         R"({"family":"gemm","shape":{"M":512,"N":256,"K":128},"dtype":"bf16",
                             "budget":20,"warm_start":false})");
  ASSERT_EQ(cold.status, HttpStatus::accepted) << cold.body;
  EXPECT_TRUE(cold.json()["warm_start"].is_null());
  const auto random = call(http::verb::post, "/v1/jobs",
                           R"({"family":"gemm","shape":{"M":512,"N":256,"K":128},"dtype":"bf16",
                               "budget":20,"search":"random"})");
  EXPECT_TRUE(random.json()["warm_start"].is_null());
  const auto bad = call(http::verb::post, "/v1/jobs",
                        R"({"family":"gemm","shape":{"M":512,"N":256,"K":128},"dtype":"bf16",
                            "warm_start":"yes"})");
  EXPECT_EQ(bad.status, HttpStatus::bad_request);
  EXPECT_NE(bad.body.find("warm_start"), std::string::npos);
}

}  // namespace
}  // namespace kt
