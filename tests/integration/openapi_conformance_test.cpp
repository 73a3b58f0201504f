// docs/openapi.json kept true: every route of the router is documented and every documented
// route exists; then a real daemon on loopback (a seeded store, a compile-mode job through NVRTC,
// no GPU; a family registered over the API) is driven to every documented status of every route,
// and each JSON body, success and error alike, is validated against the documented schema with
// valijson (Debian's JSON Schema validator). A status a case gets that the document does not list
// fails too.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <thread>

#include "client/event_reader.hpp"
#include "client/http_transport.hpp"
#include "server/api_routes.hpp"
#include "support/in_process_daemon.hpp"
#include "support/schema_check.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// One request, the route (documented path) it exercises and the status it must get.
struct Case {
  http::verb method;
  std::string path;  // the documented pattern, e.g. /v1/jobs/{id}
  std::string target;
  std::string body;
  int status;
};

// A finished tune job with two measured variants (one with a kernel): /v1/best and /v1/pareto
// have something to answer.
// The seeded job's id.
std::int64_t seed_tuned_job(Store& store) {
  NewJob job;
  job.family = "gemm";
  job.shape = {{"M", 256}, {"N", 256}, {"K", 128}};
  job.dtype = "bf16";
  job.mode = JobMode::tune;
  job.arch = "sm_90a";
  job.device_uuid = "GPU-seeded";
  job.device_name = "NVIDIA H100 80GB HBM3";
  const auto job_id = store.create_job(job);
  store.set_job_reference(job_id, 150.0);
  std::vector<VariantRecord> planned(2);
  planned[0].template_name = planned[1].template_name = "mma_multistage";
  planned[0].config = {{"BM", 128}, {"BN", 128}};
  planned[1].config = {{"BM", 64}, {"BN", 128}};
  for (auto& v : planned) v.config_key = canonical_key(v.config);
  const auto rows = store.plan_variants(job_id, planned);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    VariantOutcome outcome;
    outcome.status = VariantStatus::measured;
    outcome.timing = TimingSummary{};
    outcome.timing->median_us = i == 0 ? 100.0 : 120.0;
    outcome.error = ErrorSummary{};
    outcome.tflops = 42.0;
    outcome.speedup = 150.0 / outcome.timing->median_us;
    store.record_outcome(rows[i].id, outcome);
  }
  store.set_job_status(job_id, JobStatus::done);
  return job_id;
}

// The worked example of kernel_templates/README.md as POST /v1/families takes it.
nlohmann::ordered_json example_family_upload() {
  const auto dir = test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm";
  auto text = [&](const std::string& file) {
    std::ifstream in(dir / file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  nlohmann::ordered_json body;
  body["manifest"] = nlohmann::ordered_json::parse(text("manifest.json"));
  for (const std::string file : {"wmma_gemm.cuh", "wmma_gemm_reference.cuh"})
    body["sources"][file] = text(file);
  return body;
}

// An event stream held open on a plain socket (HttpTransport reads a reply to its end).
class OpenStream {
 public:
  OpenStream(unsigned short port, const std::string& target)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0) return;
  }
  ~OpenStream() { close(fd_); }
  OpenStream(const OpenStream&) = delete;
  OpenStream& operator=(const OpenStream&) = delete;

  // True once `text` arrived within the limit.
  bool has(const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (received_.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd watched{fd_, POLLIN, 0};
      if (left <= 0ms || poll(&watched, 1, static_cast<int>(left.count())) <= 0) return false;
      char buffer[4096];
      const ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) return false;
      received_.append(buffer, static_cast<std::size_t>(got));
    }
    return true;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_;
  std::string received_;
};

class OpenApiConformanceTest : public ::testing::Test {
 protected:
  HttpReply send(http::verb method, const std::string& target, const std::string& body = "") {
    return transport_.send(method, target, body);
  }

  test::InProcessDaemon daemon_;
  HttpTransport transport_{parse_server_url(daemon_.url), 60s, ""};
};

TEST_F(OpenApiConformanceTest, EveryRouteIsDocumentedAndAnswersAsDocumented) {
  const HttpReply served = send(http::verb::get, "/v1/openapi.json");
  ASSERT_EQ(served.status, 200);
  EXPECT_EQ(served.content_type, "application/json");
  const nlohmann::json document = nlohmann::json::parse(served.body);
  EXPECT_EQ(document["openapi"], "3.1.0");

  // Routes <-> documented operations, both ways.
  std::set<std::pair<std::string, std::string>> routes;
  for (const auto& [method, pattern] : make_api_router().routes())
    routes.insert({pattern, lower(std::string(http::to_string(method)))});
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, operations] : document["paths"].items())
    for (const auto& [method, operation] : operations.items()) documented.insert({path, method});
  for (const auto& route : routes)
    EXPECT_TRUE(documented.count(route)) << route.second << " " << route.first << " undocumented";
  for (const auto& operation : documented)
    EXPECT_TRUE(routes.count(operation))
        << operation.second << " " << operation.first << " documented but not routed";

  // A compile-mode job through the real scheduler and NVRTC, then a seeded tuned job.
  const std::string compile_job =
      R"({"family":"gemm","shape":{"M":96,"N":80,"K":40},"dtype":"bf16","mode":"compile",
          "arch":"sm_90a","budget":1,"pipeline":"serial"})";
  const HttpReply created = send(http::verb::post, "/v1/jobs", compile_job);
  ASSERT_EQ(created.status, 202) << created.body;
  const std::string job = nlohmann::json::parse(created.body)["id"].dump();
  for (int i = 0; i < 1200; ++i) {
    const auto state = nlohmann::json::parse(send(http::verb::get, "/v1/jobs/" + job).body);
    if (state["status"] == "done" || state["status"] == "failed") break;
    std::this_thread::sleep_for(100ms);
  }
  const auto page =
      nlohmann::json::parse(send(http::verb::get, "/v1/jobs/" + job + "/variants").body);
  ASSERT_EQ(page["status"], "done") << page.dump();
  std::string compiled_variant;
  for (const auto& v : page["variants"])
    if (v["has_kernel"] == true) compiled_variant = v["id"].dump();
  ASSERT_FALSE(compiled_variant.empty()) << page.dump();
  const std::string tuned = std::to_string(seed_tuned_job(daemon_.store));
  const std::string running =
      nlohmann::json::parse(
          send(http::verb::post, "/v1/jobs",
               R"({"family":"gemm","shape":{"M":128,"N":128,"K":64},"dtype":"bf16","mode":"compile",
          "arch":"sm_90a"})")
              .body)["id"]
          .dump();

  const std::string problem = "family=gemm&dtype=bf16&M=256&N=256&K=128";
  const std::string untuned = "family=gemm&dtype=bf16&M=8&N=8&K=8";
  // A batch of the tuned problem (answered) and an untuned one (refused: no GPU here).
  const std::string batch_body =
      R"({"problems":[{"family":"gemm","shape":{"M":256,"N":256,"K":128},"dtype":"bf16",
          "share":0.5},{"family":"gemm","shape":{"M":8,"N":8,"K":8},"dtype":"bf16"}]})";
  const HttpReply batch_made = send(http::verb::post, "/v1/batches", batch_body);
  ASSERT_EQ(batch_made.status, 201) << batch_made.body;
  const std::string batch = "/v1/batches/" + nlohmann::json::parse(batch_made.body)["id"].dump();
  // A batch with a job of its own still queued (as a daemon stopped mid-batch leaves one), for
  // DELETE to cancel: this host has no GPU to queue one on.
  NewJob waiting = test::tune_job();
  NewBatch open_batch;
  open_batch.device_model = waiting.device_name;
  BatchProblemRecord open_problem;
  open_problem.family = "gemm";
  open_problem.shape = waiting.shape;
  open_problem.dtype = "bf16";
  open_problem.job_id = daemon_.store.create_job(waiting);
  open_batch.problems = {open_problem};
  const std::string open = "/v1/batches/" + std::to_string(daemon_.store.create_batch(open_batch));
  const std::vector<Case> cases{
      {http::verb::get, "/healthz", "/healthz", "", 200},
      {http::verb::get, "/v1/openapi.json", "/v1/openapi.json", "", 200},
      {http::verb::get, "/metrics", "/metrics", "", 200},
      {http::verb::post, "/v1/jobs", "/v1/jobs", compile_job, 202},
      {http::verb::post, "/v1/jobs", "/v1/jobs?dry_run=1", compile_job, 200},
      {http::verb::post, "/v1/jobs", "/v1/jobs", "{", 400},
      {http::verb::post, "/v1/jobs", "/v1/jobs", std::string(2 << 20, ' '), 413},
      {http::verb::post, "/v1/jobs", "/v1/jobs",
       R"({"family":"gemm","shape":{"M":8,"N":8,"K":8},"dtype":"bf16","mode":"compile",
           "arch":"sm_90"})",
       422},
      {http::verb::post, "/v1/jobs", "/v1/jobs",
       R"({"family":"gemm","shape":{"M":8,"N":8,"K":8},"dtype":"bf16"})", 503},
      {http::verb::get, "/v1/jobs/{id}", "/v1/jobs/" + job, "", 200},
      {http::verb::get, "/v1/jobs/{id}", "/v1/jobs/x", "", 400},
      {http::verb::get, "/v1/jobs/{id}", "/v1/jobs/999999", "", 404},
      {http::verb::delete_, "/v1/jobs/{id}", "/v1/jobs/" + running, "", 200},
      {http::verb::delete_, "/v1/jobs/{id}", "/v1/jobs/x", "", 400},
      {http::verb::delete_, "/v1/jobs/{id}", "/v1/jobs/999999", "", 404},
      {http::verb::delete_, "/v1/jobs/{id}", "/v1/jobs/" + job, "", 409},
      // A finished job: its final state as events, then the server closes the stream.
      {http::verb::get, "/v1/jobs/{id}/events", "/v1/jobs/" + job + "/events", "", 200},
      // A tuned job: its stream has a best event too.
      {http::verb::get, "/v1/jobs/{id}/events", "/v1/jobs/" + tuned + "/events", "", 200},
      {http::verb::get, "/v1/jobs/{id}/events", "/v1/jobs/x/events", "", 400},
      {http::verb::get, "/v1/jobs/{id}/events", "/v1/jobs/999999/events", "", 404},
      {http::verb::get, "/v1/jobs/{id}/variants", "/v1/jobs/" + job + "/variants?log=1", "", 200},
      {http::verb::get, "/v1/jobs/{id}/variants", "/v1/jobs/" + job + "/variants?limit=0", "", 400},
      {http::verb::get, "/v1/jobs/{id}/variants", "/v1/jobs/999999/variants", "", 404},
      {http::verb::get, "/v1/jobs/{id}/variants.csv", "/v1/jobs/" + job + "/variants.csv", "", 200},
      {http::verb::get, "/v1/jobs/{id}/variants.csv", "/v1/jobs/x/variants.csv", "", 400},
      {http::verb::get, "/v1/jobs/{id}/variants.csv", "/v1/jobs/999999/variants.csv", "", 404},
      {http::verb::post, "/v1/batches", "/v1/batches", batch_body, 201},
      {http::verb::post, "/v1/batches", "/v1/batches",
       R"({"problems":[{"family":"gemm","shape":{"M":256,"N":256,"K":128},"dtype":"bf16"}],
           "dry_run":true})",
       200},
      {http::verb::post, "/v1/batches", "/v1/batches", R"({"problems":[]})", 400},
      {http::verb::post, "/v1/batches", "/v1/batches", std::string(2 << 20, ' '), 413},
      {http::verb::post, "/v1/batches", "/v1/batches",
       R"({"problems":[{"family":"nope","shape":{"M":8},"dtype":"bf16"}]})", 422},
      {http::verb::post, "/v1/batches", "/v1/batches",
       R"({"problems":[{"family":"gemm","shape":{"M":8,"N":8,"K":8},"dtype":"bf16"}]})", 503},
      {http::verb::get, "/v1/batches", "/v1/batches?limit=5", "", 200},
      {http::verb::get, "/v1/batches", "/v1/batches?limit=x", "", 400},
      {http::verb::get, "/v1/batches/{id}", batch, "", 200},
      {http::verb::get, "/v1/batches/{id}", "/v1/batches/x", "", 400},
      {http::verb::get, "/v1/batches/{id}", "/v1/batches/999999", "", 404},
      {http::verb::delete_, "/v1/batches/{id}", "/v1/batches/x", "", 400},
      {http::verb::delete_, "/v1/batches/{id}", "/v1/batches/999999", "", 404},
      {http::verb::delete_, "/v1/batches/{id}", batch, "", 409},  // nothing of its own running
      {http::verb::delete_, "/v1/batches/{id}", open, "", 200},
      {http::verb::get, "/v1/variants/{id}", "/v1/variants/" + compiled_variant + "?log=1", "",
       200},
      {http::verb::get, "/v1/variants/{id}", "/v1/variants/0", "", 400},
      {http::verb::get, "/v1/variants/{id}", "/v1/variants/999999", "", 404},
      {http::verb::get, "/v1/variants/{id}/kernel", "/v1/variants/" + compiled_variant + "/kernel",
       "", 200},
      {http::verb::get, "/v1/variants/{id}/kernel", "/v1/variants/-1/kernel", "", 400},
      {http::verb::get, "/v1/variants/{id}/kernel", "/v1/variants/999999/kernel", "", 404},
      {http::verb::get, "/v1/variants/{id}/launch", "/v1/variants/" + compiled_variant + "/launch",
       "", 200},
      {http::verb::get, "/v1/variants/{id}/launch", "/v1/variants/x/launch", "", 400},
      {http::verb::get, "/v1/variants/{id}/launch", "/v1/variants/999999/launch", "", 404},
      {http::verb::get, "/v1/best", "/v1/best?" + problem, "", 200},
      {http::verb::get, "/v1/best", "/v1/best?family=gemm", "", 400},
      {http::verb::get, "/v1/best", "/v1/best?" + untuned, "", 404},
      {http::verb::get, "/v1/best", "/v1/best?family=gemm&dtype=fp64&M=8&N=8&K=8", "", 422},
      // Issue 15: a miss answered with the nearest tuned shape, a bad flag, and a job asked for
      // on a host without a GPU.
      {http::verb::get, "/v1/best", "/v1/best?family=gemm&dtype=bf16&M=512&N=256&K=128&nearest=1",
       "", 200},
      {http::verb::get, "/v1/best", "/v1/best?" + untuned + "&nearest=2", "", 400},
      {http::verb::get, "/v1/best", "/v1/best?" + untuned + "&tune_on_miss=1", "", 503},
      {http::verb::get, "/v1/pareto", "/v1/pareto?" + problem, "", 200},
      {http::verb::get, "/v1/pareto", "/v1/pareto?dtype=bf16", "", 400},
      {http::verb::get, "/v1/pareto", "/v1/pareto?family=nope&dtype=bf16&M=8", "", 404},
      {http::verb::get, "/v1/pareto", "/v1/pareto?family=gemm&dtype=bf16&M=8&N=8", "", 422},
      {http::verb::get, "/v1/history", "/v1/history?limit=2", "", 200},
      {http::verb::get, "/v1/history", "/v1/history?status=finished", "", 400},
      {http::verb::get, "/v1/history", "/v1/history?family=typo", "", 404},
      {http::verb::get, "/v1/families", "/v1/families", "", 200},
      {http::verb::get, "/v1/devices", "/v1/devices", "", 200},
      {http::verb::get, "/v1/tuned", "/v1/tuned?family=gemm&limit=5", "", 200},
      {http::verb::get, "/v1/tuned", "/v1/tuned?colour=red", "", 400},
      {http::verb::get, "/v1/tuned", "/v1/tuned?family=typo", "", 404},
      {http::verb::get, "/", "/", "", 200},
      {http::verb::get, "/ui", "/ui", "", 200},
      {http::verb::get, "/ui/{file}", "/ui/app.js", "", 200},
      {http::verb::get, "/ui/{file}", "/ui/..%2Fsecret", "", 404},
      {http::verb::get, "/ui/vendor/{file}", "/ui/vendor/plotly-basic.min.js", "", 200},
      {http::verb::get, "/ui/vendor/{file}", "/ui/vendor/none.js", "", 404},
  };

  std::set<std::tuple<std::string, std::string, std::string>> exercised;
  std::set<std::string> seen_events;  // the third event of each stream
  // Each case on the daemon of this test unless another one is named.
  auto check = [&](const Case& c, const HttpTransport* via = nullptr) {
    const std::string method = lower(std::string(http::to_string(c.method)));
    SCOPED_TRACE(method + " " + c.target.substr(0, 120));
    const HttpReply reply = (via != nullptr ? *via : transport_).send(c.method, c.target, c.body);
    EXPECT_EQ(reply.status, c.status) << reply.body.substr(0, 400);
    const std::string status = std::to_string(reply.status);
    exercised.insert({c.path, method, status});
    const nlohmann::json& responses = document["paths"][c.path][method]["responses"];
    if (!responses.contains(status)) {
      ADD_FAILURE() << "status " << status << " is not documented";
      return;
    }
    const nlohmann::json& content = responses[status]["content"];
    ASSERT_TRUE(content.contains(reply.content_type)) << reply.content_type << " undocumented";
    if (reply.content_type == "text/event-stream") {
      // Each event's data against the schema x-events documents for its name.
      const nlohmann::json& schemas = responses[status]["x-events"];
      SseParser parser;
      const std::vector<SseEvent> events = parser.feed(reply.body);
      EXPECT_FALSE(events.empty()) << reply.body;
      EXPECT_EQ(events.empty() ? "" : events.back().name, "end") << reply.body;
      seen_events.insert(events.size() > 2 ? events[2].name : "");
      for (const SseEvent& event : events) {
        if (!schemas.contains(event.name)) {
          ADD_FAILURE() << "event " << event.name << " is not documented";
          continue;
        }
        for (const std::string& problem : test::schema_violations(
                 document, schemas[event.name], nlohmann::json::parse(event.data)))
          ADD_FAILURE() << event.name << ": " << problem << "\ndata: " << event.data.substr(0, 400);
      }
      return;
    }
    if (reply.content_type != "application/json") {
      EXPECT_FALSE(reply.body.empty());
      return;
    }
    const nlohmann::json body = nlohmann::json::parse(reply.body);
    for (const std::string& problem :
         test::schema_violations(document, content[reply.content_type]["schema"], body))
      ADD_FAILURE() << problem << "\nbody: " << reply.body.substr(0, 400);
  };
  for (const Case& c : cases) check(c);
  // tune_on_miss=1 answers 202 with the job where the daemon has a GPU: a pretended one (the
  // scheduler has none, so the job never runs; the answer is what is checked).
  DeviceInfo gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.uuid = "GPU-pretended";
  gpu.arch = "sm_90a";
  gpu.sm_major = 9;
  gpu.sm_count = 132;
  daemon_.context.devices = {gpu};
  check({http::verb::get, "/v1/best",
         "/v1/best?family=gemm&dtype=bf16&M=1024&N=256&K=128&tune_on_miss=1&nearest=1", "", 202});
  daemon_.context.devices.clear();

  // Families over the API: refused until the daemon allows them, then each answer.
  const std::string family = example_family_upload().dump();
  auto with_name = [](const std::string& name) {
    nlohmann::ordered_json body = example_family_upload();
    body["manifest"]["name"] = name;
    return body.dump();
  };
  nlohmann::ordered_json oversized = example_family_upload();
  oversized["sources"]["big.cuh"] = std::string(300 * 1024, ' ');
  nlohmann::ordered_json broken = example_family_upload();
  broken["manifest"]["dtypes"] = {"fp64"};
  check({http::verb::post, "/v1/families", "/v1/families", family, 403});
  check({http::verb::get, "/v1/families/registrations/{id}", "/v1/families/registrations/x", "",
         403});
  daemon_.allow_user_families();
  const HttpReply accepted = send(http::verb::post, "/v1/families", family);
  check({http::verb::post, "/v1/families", "/v1/families", with_name("wmma_gemm_b"), 202});
  const std::string registration =
      "/v1/families/registrations/" + nlohmann::json::parse(accepted.body)["id"].get<std::string>();
  for (int i = 0; i < 1200; ++i) {
    if (nlohmann::json::parse(send(http::verb::get, registration).body)["status"] != "compiling")
      break;
    std::this_thread::sleep_for(100ms);
  }
  check({http::verb::get, "/v1/families/registrations/{id}", registration, "", 200});
  check({http::verb::post, "/v1/families", "/v1/families", family, 200});
  check({http::verb::post, "/v1/families", "/v1/families", with_name("../up"), 400});
  check({http::verb::post, "/v1/families", "/v1/families", with_name("gemm"), 409});
  check({http::verb::post, "/v1/families", "/v1/families", oversized.dump(), 413});
  check({http::verb::post, "/v1/families", "/v1/families", broken.dump(), 422});
  check({http::verb::get, "/v1/families/registrations/{id}", "/v1/families/registrations/nope", "",
         404});
  check({http::verb::get, "/v1/families", "/v1/families", "", 200});  // a registered one listed

  // Event streams past --max-event-streams: a daemon capped at one, whose one stream follows a
  // job that stays queued (stored, never enqueued).
  ServerOptions capped_options = test::InProcessDaemon::loopback_server();
  capped_options.max_event_streams = 1;
  test::InProcessDaemon capped(capped_options);
  NewJob queued;
  queued.family = "gemm";
  queued.shape = {{"M", 64}, {"N", 64}, {"K", 64}};
  queued.dtype = "bf16";
  queued.mode = JobMode::compile;
  queued.arch = "sm_90a";
  const std::string events =
      "/v1/jobs/" + std::to_string(capped.store.create_job(queued)) + "/events";
  OpenStream held(capped.server.port(), events);
  ASSERT_TRUE(held.has("event: status", 10s)) << held.received();
  const HttpTransport capped_transport(parse_server_url(capped.url), 10s, "");
  check({http::verb::get, "/v1/jobs/{id}/events", events, "", 503}, &capped_transport);
  EXPECT_TRUE(seen_events.count("best")) << "no stream carried a best event to validate";
  // Every documented status of every route was driven by a case above.
  for (const auto& [path, operations] : document["paths"].items())
    for (const auto& [method, operation] : operations.items())
      for (const auto& [status, response] : operation["responses"].items())
        EXPECT_TRUE(exercised.count({path, method, status}))
            << method << " " << path << " " << status << " documented but not exercised";
}

// The validator is a real check: a body missing a required field, or with a wrong type, fails.
TEST_F(OpenApiConformanceTest, TheSchemasRejectWrongBodies) {
  const nlohmann::json document =
      nlohmann::json::parse(send(http::verb::get, "/v1/openapi.json").body);
  const nlohmann::json error_schema = {{"$ref", "#/components/schemas/Error"}};
  EXPECT_TRUE(
      test::schema_violations(document, error_schema,
                              {{"error", {{"code", "unknown_job"}, {"message", "no job 3"}}}})
          .empty());
  EXPECT_FALSE(
      test::schema_violations(document, error_schema, {{"error", {{"code", "x"}}}}).empty());
  const nlohmann::json health = {{"$ref", "#/components/schemas/Health"}};
  EXPECT_FALSE(
      test::schema_violations(document, health,
                              {{"status", "ok"}, {"version", 1}, {"devices", 0}, {"families", 1}})
          .empty());
}

}  // namespace
}  // namespace kt
