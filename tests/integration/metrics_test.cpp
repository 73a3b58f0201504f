// GET /metrics scraped from a real daemon on loopback after a compile-mode job: the text parses
// as Prometheus exposition lines and the counters say what the job did.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "client/http_transport.hpp"
#include "support/in_process_daemon.hpp"
#include "support/metrics_exposition.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

using test::parse_exposition;

TEST(Metrics, CountWhatACompileJobDid) {
  test::InProcessDaemon daemon;
  const HttpTransport transport(parse_server_url(daemon.url), 60s, "");
  const auto before = parse_exposition(transport.send(http::verb::get, "/metrics").body);
  EXPECT_EQ(before.at("kerntune_jobs_ended_total{status=\"done\"}"), 0);
  EXPECT_EQ(before.at("kerntune_compile_seconds_count"), 0);

  const HttpReply created = transport.send(http::verb::post, "/v1/jobs",
                                           R"({"family":"gemm","shape":{"M":96,"N":80,"K":40},
      "dtype":"bf16","mode":"compile","arch":"sm_90a","budget":2})");
  ASSERT_EQ(created.status, 202) << created.body;
  const std::string id = nlohmann::json::parse(created.body)["id"].dump();
  nlohmann::json job;
  for (int i = 0; i < 1200; ++i) {
    job = nlohmann::json::parse(transport.send(http::verb::get, "/v1/jobs/" + id).body);
    if (job["status"] == "done" || job["status"] == "failed") break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(job["status"], "done") << job.dump();
  // The runner counts the job's end after run_job returns: give it a moment.
  std::map<std::string, double> after;
  for (int i = 0; i < 50; ++i) {
    const HttpReply scraped = transport.send(http::verb::get, "/metrics");
    ASSERT_EQ(scraped.status, 200);
    EXPECT_EQ(scraped.content_type, "text/plain; version=0.0.4; charset=utf-8");
    after = parse_exposition(scraped.body);
    if (after.at("kerntune_jobs_ended_total{status=\"done\"}") == 1) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(after.at("kerntune_jobs_ended_total{status=\"done\"}"), 1);
  EXPECT_EQ(after.at("kerntune_jobs_queued"), 0);
  EXPECT_EQ(after.at("kerntune_jobs_running"), 0);

  const auto& by_status = job["progress"]["by_status"];
  const double compiled = by_status.value("compiled", 0);
  const double failed =
      by_status.value("compile_error", 0) + by_status.value("resource_exceeded", 0);
  EXPECT_EQ(compiled + failed, 2);
  EXPECT_EQ(after.at("kerntune_variants_total{outcome=\"compiled\"}"), compiled);
  EXPECT_EQ(after.at("kerntune_variants_total{outcome=\"compile_error\"}") +
                after.at("kerntune_variants_total{outcome=\"resource_exceeded\"}"),
            failed);
  // Each variant compiled once (a fresh cache, nothing fetched from it), every observation in the
  // +Inf bucket.
  EXPECT_EQ(after.at("kerntune_compile_cache_hits_total"), 0);
  EXPECT_EQ(after.at("kerntune_compile_seconds_count"), 2);
  EXPECT_EQ(after.at("kerntune_compile_seconds_bucket{le=\"+Inf\"}"), 2);
  EXPECT_GT(after.at("kerntune_compile_seconds_sum"), 0);
  EXPECT_LE(after.at("kerntune_compile_seconds_bucket{le=\"0.1\"}"),
            after.at("kerntune_compile_seconds_bucket{le=\"64\"}"));
  EXPECT_EQ(after.at("kerntune_measure_seconds_count"), 0);  // compile-only: no GPU work
  EXPECT_EQ(after.at("kerntune_worker_restarts_total"), 0);
  EXPECT_EQ(after.at("kerntune_compile_process_restarts_total"), 0);
}

TEST(Metrics, CountRequestsByRouteAndStatusAndDescribeTheProcess) {
  test::InProcessDaemon daemon;
  const HttpTransport transport(parse_server_url(daemon.url), 60s, "");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(transport.send(http::verb::get, "/v1/jobs/999").status, 404);
  EXPECT_EQ(transport.send(http::verb::get, "/v1/families").status, 200);
  EXPECT_EQ(transport.send(http::verb::get, "/no/such/path").status, 404);
  EXPECT_EQ(transport.send(http::verb::delete_, "/v1/families").status, 405);
  const auto scraped = parse_exposition(transport.send(http::verb::get, "/metrics").body);
  // By the route's pattern, never the raw path (the labels stay few whatever clients ask for).
  EXPECT_EQ(scraped.at("kerntune_http_requests_total{method=\"GET\",route=\"/v1/jobs/{id}\","
                       "status=\"404\"}"),
            3);
  EXPECT_EQ(scraped.at("kerntune_http_requests_total{method=\"GET\",route=\"/v1/families\","
                       "status=\"200\"}"),
            1);
  EXPECT_EQ(scraped.at("kerntune_http_requests_total{method=\"GET\",route=\"unmatched\","
                       "status=\"404\"}"),
            1);
  EXPECT_EQ(scraped.at("kerntune_http_requests_total{method=\"DELETE\",route=\"unmatched\","
                       "status=\"405\"}"),
            1);
  for (const auto& [name, value] : scraped)
    EXPECT_EQ(name.find("/v1/jobs/999"), std::string::npos) << name;
  EXPECT_EQ(scraped.at("kerntune_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/"
                       "jobs/{id}\"}"),
            3);
  EXPECT_GT(scraped.at("kerntune_http_request_duration_seconds_sum{method=\"GET\",route=\"/v1/"
                       "jobs/{id}\"}"),
            0);
  EXPECT_EQ(scraped.at("kerntune_build_info{version=\"" + daemon.context.version + "\"}"), 1);
  EXPECT_GT(scraped.at("process_resident_memory_bytes"), 1e6);
  EXPECT_GT(scraped.at("process_open_fds"), 3);
  EXPECT_GE(scraped.at("process_max_fds"), scraped.at("process_open_fds"));
  EXPECT_GT(scraped.at("process_cpu_seconds_total"), 0);
  EXPECT_GT(scraped.at("process_start_time_seconds"), 1.7e9);  // after 2023
}

}  // namespace
}  // namespace kt
