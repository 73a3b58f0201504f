// A real kerntuned in-process on 127.0.0.1 (port 0), with a real Store on a temp file, the real
// families, and a real JobScheduler without GPUs, driven through the client library: the same
// path a program or the CLI takes.
#include <gtest/gtest.h>

#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "client/kerntune_client.hpp"
#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"
#include "server/http_server.hpp"
#include "support/in_process_daemon.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  static JobSpec compile_spec(std::int64_t budget) {
    JobSpec spec;
    spec.family = "gemm";
    spec.shape = {{"m", 200}, {"n", 136}, {"k", 72}};  // ragged on purpose
    spec.dtype = "bf16";
    spec.mode = "compile";
    spec.arch = "sm_100a";
    spec.budget = budget;
    return spec;
  }

  // Polls until the job leaves queued/running.
  nlohmann::json wait_until_finished(const Client& client, std::int64_t id,
                                     std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      nlohmann::json job = client.job(id);
      const std::string status = job["status"];
      if (status != "queued" && status != "running") return job;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "job " << id << " still " << status << " after " << limit.count() << " s";
        return job;
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  // The ClientError a call throws (fails the test if it does not throw).
  template <typename Call>
  static ClientError error_of(Call&& call) {
    try {
      call();
    } catch (const ClientError& error) {
      return error;
    }
    ADD_FAILURE() << "expected a ClientError";
    return ClientError(-1, "", "");
  }

  std::size_t job_count() {
    JobFilter filter;
    filter.limit = 1000;
    return store_.jobs(filter).size();
  }

  test::InProcessDaemon daemon_;
  Store& store_ = daemon_.store;
  FamilyRegistry& families_ = daemon_.families;
  HttpServer& server_ = daemon_.server;
  const std::string& url_ = daemon_.url;
};

TEST_F(ServerTest, HealthAndFamilies) {
  const Client client(url_);
  const auto health = client.health();
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["devices"], 0);

  const auto families = client.families()["families"];
  const auto gemm = std::find_if(families.begin(), families.end(),
                                 [](const nlohmann::json& f) { return f["name"] == "gemm"; });
  ASSERT_NE(gemm, families.end());
  EXPECT_FALSE((*gemm)["templates"].empty());

  const auto devices = client.devices();
  EXPECT_TRUE(devices["devices"].empty());
  EXPECT_NE(devices["error"].get<std::string>().find("libcuda"), std::string::npos);
}

TEST_F(ServerTest, CompileJobRunsToTheEndAndReportsResources) {
  const Client client(url_);
  const auto submitted = client.submit_job(compile_spec(3));
  const auto id = submitted["id"].get<std::int64_t>();
  // The compile lane may pick the job up before the reply is written.
  EXPECT_TRUE(submitted["status"] == "queued" || submitted["status"] == "running") << submitted;
  EXPECT_EQ(submitted["shape"], (nlohmann::json{{"M", 200}, {"N", 136}, {"K", 72}}));

  const auto job = wait_until_finished(client, id, 300s);
  ASSERT_EQ(job["status"], "done") << job.dump(2);

  const auto variants = client.variants(id)["variants"];
  int through_gates = 0, compiled = 0;
  std::int64_t compiled_id = 0;
  for (const auto& v : variants) {
    const std::string status = v["status"];
    EXPECT_NE(status, "pending") << v.dump();
    if (status == "pruned" || status == "unsupported_arch") continue;
    ++through_gates;
    if (status != "compiled") continue;
    ++compiled;
    compiled_id = v["id"].get<std::int64_t>();
    EXPECT_GT(v["registers"].get<int>(), 0) << v.dump();
    EXPECT_GE(v["smem_bytes"].get<int>(), 0) << v.dump();
    EXPECT_TRUE(v["has_kernel"].get<bool>());
  }
  EXPECT_EQ(through_gates, 3);
  ASSERT_GT(compiled, 0) << variants.dump(2);
  EXPECT_EQ(job["progress"]["finished"], job["progress"]["total"]);

  // The compile log comes only when asked for.
  EXPECT_FALSE(client.variants(id)["variants"][0].contains("compile_log"));
  EXPECT_TRUE(client.variants(id, true)["variants"][0].contains("compile_log"));

  const std::vector<char> cubin = client.fetch_kernel(compiled_id);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4),
            "\x7f"
            "ELF");

  const auto history = client.history({})["jobs"];
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0]["id"], id);
  EXPECT_EQ(history[0]["status"], "done");

  // Done jobs cannot be cancelled.
  EXPECT_EQ(error_of([&] { client.cancel(id); }).status(), 409);
}

TEST_F(ServerTest, TuneJobWithoutGpuIs503AndCreatesNothing) {
  const Client client(url_);
  JobSpec spec = compile_spec(0);
  spec.mode = "tune";
  spec.arch.clear();
  const ClientError error = error_of([&] { client.submit_job(spec); });
  EXPECT_EQ(error.status(), 503);
  EXPECT_EQ(error.code(), "no_device");
  EXPECT_NE(std::string(error.what()).find("use \"mode\":\"compile\" with \"arch\""),
            std::string::npos);
  EXPECT_EQ(job_count(), 0u);
  EXPECT_TRUE(client.history({})["jobs"].empty());
}

TEST_F(ServerTest, BadInputsAreJsonErrors) {
  const Client client(url_);
  struct Case {
    std::string body;
    int status;
    std::string code;
  };
  const std::vector<Case> cases{
      {"{not json", 400, "invalid_json"},
      {R"({"family":"gemm","shape":{"M":64,"N":64,"K":64},"dtype":"bf16","mode":"compile",
           "arch":"sm_90a","budget":-1})",
       422, "invalid_budget"},
      {R"({"family":"nope","shape":{"M":64,"N":64,"K":64},"dtype":"bf16"})", 422, "unknown_family"},
      {R"({"family":"gemm","shape":{"M":64,"N":64,"K":0},"dtype":"bf16","mode":"compile",
           "arch":"sm_90a"})",
       422, "invalid_shape"},
      {R"({"family":"gemm","shape":{"M":64,"N":64,"K":64},"dtype":"bf16","mode":"compile"})", 422,
       "unknown_arch"},
      {R"({"family":"gemm","shape":{"M":64,"N":64,"K":"64"},"dtype":"bf16"})", 400,
       "invalid_field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ClientError error = error_of([&] { client.call(http::verb::post, "/v1/jobs", c.body); });
    EXPECT_EQ(error.status(), c.status);
    EXPECT_EQ(error.code(), c.code);
  }
  EXPECT_EQ(error_of([&] { client.call(http::verb::get, "/v1/jobs/abc"); }).status(), 400);
  EXPECT_EQ(error_of([&] { client.call(http::verb::get, "/v1/history?status=bogus"); }).status(),
            400);
  EXPECT_EQ(error_of([&] { client.call(http::verb::patch, "/v1/jobs"); }).status(), 405);
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(ServerTest, OversizedBodyIs413AndTheServerGoesOn) {
  const Client client(url_);
  const std::string body(2 << 20, ' ');
  const ClientError error = error_of([&] { client.call(http::verb::post, "/v1/jobs", body); });
  EXPECT_EQ(error.status(), 413);
  EXPECT_EQ(error.code(), "body_too_large");
  EXPECT_EQ(job_count(), 0u);
  EXPECT_EQ(client.health()["status"], "ok");
}

TEST_F(ServerTest, UnknownJobAndUntunedShapeAre404) {
  const Client client(url_);
  const ClientError unknown = error_of([&] { client.job(4242); });
  EXPECT_EQ(unknown.status(), 404);
  EXPECT_EQ(unknown.code(), "unknown_job");

  TunedQuery query;
  query.family = "gemm";
  query.dtype = "bf16";
  query.shape = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  const ClientError untuned = error_of([&] { client.best(query); });
  EXPECT_EQ(untuned.status(), 404);
  EXPECT_EQ(untuned.code(), "not_tuned");
  EXPECT_NE(std::string(untuned.what()).find("nothing tuned for"), std::string::npos);
  EXPECT_FALSE(client.find_best(query).has_value());
  EXPECT_TRUE(client.pareto(query)["front"].empty());
}

TEST_F(ServerTest, CancelStopsACompileJob) {
  const Client client(url_);
  const auto id = client.submit_job(compile_spec(0))["id"].get<std::int64_t>();  // every variant
  const auto cancelled = client.cancel(id);
  EXPECT_TRUE(cancelled["cancel_requested"].get<bool>());
  const auto job = wait_until_finished(client, id, 120s);
  EXPECT_EQ(job["status"], "cancelled") << job.dump(2);
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), server_.port()});
  boost::beast::flat_buffer buffer;
  for (const char* target : {"/healthz", "/v1/families", "/v1/nothing"}) {
    http::request<http::string_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.keep_alive(true);
    http::write(socket, request);
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    EXPECT_TRUE(response.keep_alive()) << target;
    EXPECT_EQ(response[http::field::content_type], "application/json");
    EXPECT_FALSE(nlohmann::json::parse(response.body(), nullptr, false).is_discarded()) << target;
  }
}

TEST(ClientTest, UnreachableServerIsAClearError) {
  // Bind a port and close it again: nothing listens there afterwards.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  acceptor.close();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  try {
    Client(url).health();
    FAIL() << "no error";
  } catch (const ClientError& error) {
    EXPECT_EQ(error.status(), 0);
    EXPECT_EQ(error.code(), "unreachable");
    EXPECT_NE(std::string(error.what()).find("cannot reach kerntuned at " + url),
              std::string::npos);
  }
  EXPECT_THROW(Client("https://example.com"), ClientError);
}

}  // namespace
}  // namespace kt
