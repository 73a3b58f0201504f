// POST /v1/jobs "pipeline" and "configs" through a real kerntuned (in-process, loopback, temp
// SQLite, the real GEMM family, no GPU): bad values are refused with a 4xx that says why and
// store nothing; good ones are stored, shown in the job, and a pinned compile job compiles
// exactly its configs and reports its stats.
#include <gtest/gtest.h>

#include <thread>

#include <boost/beast/http.hpp>

#include "client/kerntune_client.hpp"
#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"
#include "server/http_server.hpp"
#include "support/in_process_daemon.hpp"
#include "support/test_paths.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

const Shape kShape{{"M", 200}, {"N", 136}, {"K", 72}};

class JobOptionsTest : public ::testing::Test {
 protected:
  // Points of the GEMM space for sm_90a at kShape: the first `count` survivors, and (if asked)
  // one config that a constraint prunes, each as {"template": ..., axis: value, ...}.
  std::vector<nlohmann::json> space_points(std::size_t count, bool pruned) {
    const Family* gemm = families_.find("gemm");
    std::vector<nlohmann::json> out;
    for (const VariantPlan& plan :
         enumerate_variants(*gemm, kShape, "bf16", *limits_for_arch("sm_90a"))) {
      if (plan.unsupported_arch || plan.pruned_by.has_value() != pruned) continue;
      nlohmann::json point = to_json(plan.config);
      point["template"] = plan.tmpl->name;
      out.push_back(point);
      if (out.size() == count) break;
    }
    return out;
  }

  static std::string body(const nlohmann::json& extra) {
    nlohmann::json job = {{"family", "gemm"},
                          {"shape", {{"M", 200}, {"N", 136}, {"K", 72}}},
                          {"dtype", "bf16"},
                          {"mode", "compile"},
                          {"arch", "sm_90a"}};
    job.update(extra);
    return job.dump();
  }

  std::size_t job_count() {
    JobFilter filter;
    filter.limit = 1000;
    return store_.jobs(filter).size();
  }

  nlohmann::json wait_until_finished(const Client& client, std::int64_t id) {
    const auto deadline = std::chrono::steady_clock::now() + 300s;
    for (;;) {
      nlohmann::json job = client.job(id);
      if (job["status"] != "queued" && job["status"] != "running") return job;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "job " << id << " did not finish";
        return job;
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  test::InProcessDaemon daemon_;
  Store& store_ = daemon_.store;
  FamilyRegistry& families_ = daemon_.families;
  HttpServer& server_ = daemon_.server;
  const std::string& url_ = daemon_.url;
};

TEST_F(JobOptionsTest, BadPipelineOrConfigsAreRefusedWithTheReasonAndStoreNothing) {
  const Client client(url_);
  const auto good = space_points(1, false);
  const auto pruned = space_points(1, true);
  ASSERT_EQ(good.size(), 1u);
  ASSERT_EQ(pruned.size(), 1u);
  nlohmann::json bad_value = good[0];
  bad_value["BM"] = 100;
  nlohmann::json missing_axis = good[0];
  missing_axis.erase("STAGES");
  nlohmann::json extra_axis = good[0];
  extra_axis["COLOUR"] = 1;
  nlohmann::json unknown_template = good[0];
  unknown_template["template"] = "no_such_template";
  nlohmann::json wrong_arch_template = good[0];
  wrong_arch_template["template"] = "mma_multistage";  // written for sm_80..sm_89 only

  struct Case {
    nlohmann::json extra;
    int status;
    std::string code;
    std::string says;
  };
  const std::vector<Case> cases{
      {{{"pipeline", 3}}, 400, "invalid_field", "pipeline"},
      {{{"pipeline", "parallel"}}, 422, "invalid_pipeline", "parallel"},
      {{{"search", "annealing"}}, 422, "invalid_search", "exhaustive, random, model, local"},
      {{{"search", 7}}, 400, "invalid_field", "search"},
      {{{"search", "local"}}, 422, "invalid_search", "needs a pipelined tuning job"},
      {{{"search_patience", -1}}, 422, "invalid_search", "search_patience"},
      {{{"search_seconds", "soon"}}, 422, "invalid_search", "search_seconds"},
      {{{"search_seconds", 30}}, 422, "invalid_search", "apply to pipelined tuning jobs"},
      {{{"configs", {{"BM", 64}}}}, 400, "invalid_configs", "must be an array"},
      {{{"configs", nlohmann::json::array()}}, 400, "invalid_configs", "empty"},
      {{{"configs", {7}}}, 400, "invalid_configs", "configs[0] must be an object"},
      {{{"configs", {good[0], bad_value}}}, 400, "invalid_configs", "BM = 100 is not one of"},
      {{{"configs", {missing_axis}}}, 400, "invalid_configs", "no value for axis STAGES"},
      {{{"configs", {extra_axis}}}, 400, "invalid_configs", "'COLOUR' is not an axis"},
      {{{"configs", {pruned[0]}}}, 400, "invalid_configs", "constraint failed"},
      {{{"configs", {unknown_template}}}, 400, "invalid_configs", "no template"},
      {{{"configs", {wrong_arch_template}}}, 400, "invalid_configs", "not written for sm_90a"},
  };
  for (const Case& c : cases) {
    const std::string request = body(c.extra);
    SCOPED_TRACE(request);
    try {
      client.call(http::verb::post, "/v1/jobs", request);
      ADD_FAILURE() << "accepted";
    } catch (const ClientError& error) {
      EXPECT_EQ(error.status(), c.status);
      EXPECT_EQ(error.code(), c.code);
      EXPECT_NE(std::string(error.what()).find(c.says), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(job_count(), 0u);
  EXPECT_TRUE(client.history({})["jobs"].empty());
}

TEST_F(JobOptionsTest, PinnedSerialCompileJobCompilesExactlyItsConfigsAndReportsStats) {
  const Client client(url_);
  auto points = space_points(2, false);
  ASSERT_EQ(points.size(), 2u);
  const std::string second_template = points[1]["template"];
  points[1].erase("template");  // the daemon finds it
  const nlohmann::json duplicate = points[0];
  const nlohmann::json submitted =
      client.call(http::verb::post, "/v1/jobs",
                  body({{"pipeline", "serial"}, {"configs", {points[0], points[1], duplicate}}}));
  EXPECT_EQ(submitted["pipeline"], "serial");
  EXPECT_EQ(submitted["search"]["name"], "exhaustive");  // pinned configs run as given
  EXPECT_TRUE(submitted["convergence"].is_array());
  ASSERT_TRUE(submitted["configs"].is_array()) << submitted.dump(2);
  ASSERT_EQ(submitted["configs"].size(), 2u);  // the duplicate is kept once
  EXPECT_EQ(submitted["configs"][1]["template"], second_template);
  EXPECT_TRUE(submitted["stats"].is_object());
  EXPECT_TRUE(submitted["stats"]["wall_seconds"].is_null() ||
              submitted["stats"]["wall_seconds"].is_number());

  const auto id = submitted["id"].get<std::int64_t>();
  const nlohmann::json job = wait_until_finished(client, id);
  ASSERT_EQ(job["status"], "done") << job.dump(2);
  EXPECT_EQ(job["progress"]["total"], 2);
  const auto variants = client.variants(id)["variants"];
  ASSERT_EQ(variants.size(), 2u);
  for (const auto& v : variants) {
    EXPECT_EQ(v["status"], "compiled") << v.dump();
    nlohmann::json expected = v["config"];
    expected["template"] = v["template"];
    EXPECT_TRUE(expected == points[0] || v["config"] == points[1]) << v.dump();
    EXPECT_TRUE(v["gpu_ordinal"].is_null());
  }
  const nlohmann::json& stats = job["stats"];
  EXPECT_EQ(job["gpus"], 0);
  EXPECT_EQ(stats["variants_finished"], 2);
  EXPECT_EQ(stats["variants_measured"], 0);
  EXPECT_EQ(stats["compiled"], 2);
  EXPECT_GT(stats["compile_seconds_median"].get<double>(), 0);
  EXPECT_GE(stats["compile_seconds_total"].get<double>(),
            stats["compile_seconds_median"].get<double>());
  EXPECT_GT(stats["wall_seconds"].get<double>(), 0);
  EXPECT_GT(stats["variants_per_minute"].get<double>(), 0);
  EXPECT_TRUE(stats["gpu_busy_seconds"].is_null());
  EXPECT_TRUE(stats["gpu_idle_fraction"].is_null());

  // The same configs again: cache hits cost no NVRTC time and are not counted as compiled.
  const auto again =
      client.call(http::verb::post, "/v1/jobs", body({{"configs", {points[0], points[1]}}}))["id"]
          .get<std::int64_t>();
  const nlohmann::json second = wait_until_finished(client, again);
  ASSERT_EQ(second["status"], "done") << second.dump(2);
  EXPECT_EQ(second["pipeline"], "pipelined");
  EXPECT_EQ(second["stats"]["compiled"], 0);
  EXPECT_TRUE(second["stats"]["compile_seconds_median"].is_null());
  EXPECT_EQ(second["stats"]["variants_finished"], 2);
}

}  // namespace
}  // namespace kt
