// The history page's server side on a real kerntuned on loopback: the static files with their
// content types (raw requests, so nothing tidies the path), path escapes refused, and
// GET /v1/tuned, the shape browser's index, over a store holding measured variants.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "support/in_process_daemon.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

class HistoryPageTest : public ::testing::Test {
 protected:
  http::response<http::string_body> get(const std::string& target) {
    boost::asio::io_context io;
    tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), daemon_.server.port()});
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    boost::asio::write(socket, boost::asio::buffer(request));
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(socket, buffer, parser);
    return parser.release();
  }

  // A measured variant of a tune job for (device, shape), with the given median.
  std::int64_t measure(std::int64_t job_id, std::int64_t bm, double median_us) {
    const auto planned = daemon_.store.plan_variants(job_id, {test::planned(bm)});
    std::int64_t id = 0;
    for (const auto& v : planned)
      if (v.config.at("BM") == bm) id = v.id;
    daemon_.store.record_compile(id, test::compiled(64, 1024), 128, 0);
    daemon_.store.record_outcome(id, test::measured(median_us, 1e-3));
    return id;
  }

  test::InProcessDaemon daemon_;
};

TEST_F(HistoryPageTest, PageFilesAreServedWithTheirContentTypes) {
  const auto index = get("/");
  ASSERT_EQ(index.result_int(), 200u) << index.body();
  EXPECT_EQ(index[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_NE(index.body().find("<title>kerntune</title>"), std::string::npos);
  EXPECT_EQ(get("/ui").body(), index.body());

  const auto script = get("/ui/app.js");
  ASSERT_EQ(script.result_int(), 200u);
  EXPECT_EQ(script[http::field::content_type], "text/javascript; charset=utf-8");
  EXPECT_EQ(script["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(get("/ui/style.css")[http::field::content_type], "text/css; charset=utf-8");

  const auto plotly = get("/ui/vendor/plotly-basic.min.js");
  ASSERT_EQ(plotly.result_int(), 200u);
  EXPECT_GT(plotly.body().size(), 500'000u);  // the whole library, not a stub
  const auto licence = get("/ui/vendor/plotly-LICENSE.txt");
  ASSERT_EQ(licence.result_int(), 200u);
  EXPECT_NE(licence.body().find("MIT License"), std::string::npos);
}

TEST_F(HistoryPageTest, PathEscapesAndMissingFilesAre404) {
  for (const std::string target :
       {"/ui/..%2F..%2FCMakeLists.txt", "/ui/%2e%2e", "/ui/vendor/..%2Fapp.js",
        "/ui/../CMakeLists.txt", "/ui/.hidden", "/ui/missing.js", "/ui/vendor",
        "/ui/vendor/%2Fetc%2Fpasswd", "/ui/%00app.js"}) {
    const auto response = get(target);
    EXPECT_EQ(response.result_int(), 404u) << target << ": " << response.body();
    EXPECT_EQ(nlohmann::json::parse(response.body(), nullptr, false)["error"]["code"], "not_found")
        << target;
  }
}

TEST_F(HistoryPageTest, TunedListsEveryProblemWithItsBestVariant) {
  const std::int64_t h100 = daemon_.store.create_job(test::tune_job("NVIDIA H100 80GB HBM3"));
  const std::int64_t b200 = daemon_.store.create_job(test::tune_job("NVIDIA B200"));
  measure(h100, 64, 900);
  const std::int64_t fastest = measure(h100, 128, 700);
  measure(h100, 256, 800);
  const std::int64_t other = measure(b200, 64, 400);

  const auto all = get("/v1/tuned");
  ASSERT_EQ(all.result_int(), 200u) << all.body();
  const auto body = nlohmann::json::parse(all.body());
  ASSERT_EQ(body["count"], 2) << body.dump();
  // Ordered by family, then device name.
  EXPECT_EQ(body["problems"][0]["device"], "NVIDIA B200");
  EXPECT_EQ(body["problems"][0]["best"]["id"], other);
  const auto& problem = body["problems"][1];
  EXPECT_EQ(problem["device"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(problem["family"], "gemm");
  EXPECT_EQ(problem["dtype"], "bf16");
  EXPECT_EQ(problem["shape"], (nlohmann::json{{"K", 4096}, {"M", 4096}, {"N", 4096}}));
  EXPECT_EQ(problem["best"]["id"], fastest);
  EXPECT_EQ(problem["best"]["median_us"], 700.0);
  EXPECT_GE(problem["front_size"], 1);

  const auto one = nlohmann::json::parse(get("/v1/tuned?family=gemm&device=NVIDIA%20B200").body());
  ASSERT_EQ(one["count"], 1) << one.dump();
  EXPECT_EQ(one["problems"][0]["best"]["id"], other);
  EXPECT_EQ(nlohmann::json::parse(get("/v1/tuned?limit=1").body())["count"], 1);
  EXPECT_EQ(nlohmann::json::parse(get("/v1/tuned?family=attention_fwd").body())["count"], 0);
}

TEST_F(HistoryPageTest, TunedRefusesUnknownFamiliesAndParameters) {
  const auto family = get("/v1/tuned?family=gem");
  EXPECT_EQ(family.result_int(), 404u);
  EXPECT_EQ(nlohmann::json::parse(family.body())["error"]["code"], "unknown_family");
  const auto parameter = get("/v1/tuned?shape=1");
  EXPECT_EQ(parameter.result_int(), 400u);
  EXPECT_EQ(nlohmann::json::parse(parameter.body())["error"]["code"], "unknown_parameter");
  EXPECT_EQ(get("/v1/tuned?limit=0").result_int(), 400u);
}

}  // namespace
}  // namespace kt
