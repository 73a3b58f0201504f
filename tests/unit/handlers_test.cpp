// The API handlers called directly through the router (no sockets) with a real Store on a temp
// file and the real families: every bad input gets its 4xx and JSON error and leaves the store as
// it was; good input creates, reads and cancels jobs and reads stored results.
#include <gtest/gtest.h>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/api_routes.hpp"
#include "server/app_context.hpp"
#include "support/baseline_fixtures.hpp"
#include "support/routed_app_test.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

DeviceInfo fake_h100(int ordinal, const std::string& uuid) {
  DeviceInfo device;
  device.ordinal = ordinal;
  device.name = "NVIDIA H100 80GB HBM3";
  device.uuid = uuid;
  device.sm_major = 9;
  device.arch = "sm_90a";
  device.sm_count = 132;
  return device;
}

// The scheduler is built but never started: handlers only enqueue, nothing compiles here.
class HandlersTest : public test::RoutedAppTest {
 protected:
  explicit HandlersTest(std::vector<DeviceInfo> devices = {},
                        std::string device_error = "libcuda.so.1 not found")
      : RoutedAppTest(std::move(devices), std::move(device_error)) {}

  ApiResponse post_job(const std::string& body) { return call(http::verb::post, "/v1/jobs", body); }

  // A bad request: the status, the error code, a message, and no new job.
  void expect_refused(const ApiResponse& response, HttpStatus status, const std::string& code,
                      std::size_t jobs_before) {
    EXPECT_EQ(response.status, status) << response.body;
    EXPECT_EQ(response.content_type, "application/json");
    const auto body = response.json();
    ASSERT_TRUE(body.contains("error")) << response.body;
    EXPECT_EQ(body["error"]["code"], code) << response.body;
    EXPECT_FALSE(body["error"]["message"].get<std::string>().empty());
    EXPECT_EQ(job_count(), jobs_before);
  }

  std::int64_t create_compile_job() {
    const auto response = post_job(
        R"({"family":"gemm","shape":{"M":128,"N":256,"K":64},"dtype":"bf16",
            "mode":"compile","arch":"sm_100a","budget":4})");
    EXPECT_EQ(response.status, HttpStatus::accepted) << response.body;
    return response.json()["id"].get<std::int64_t>();
  }
};

const char* kGoodShape = R"("shape":{"M":64,"N":64,"K":64})";

std::string job_body(const std::string& fields) {
  return std::string("{") + fields + "}";
}

TEST_F(HandlersTest, BadJobBodiesAreRefusedWithoutStoringAnything) {
  create_compile_job();  // so "unchanged" means unchanged, not merely empty
  const std::size_t before = job_count();
  const std::string compile = R"("mode":"compile","arch":"sm_90a")";
  const std::string good = std::string(R"("family":"gemm",)") + kGoodShape + R"(,"dtype":"bf16")";
  struct Case {
    std::string body;
    HttpStatus status;
    std::string code;
  };
  const std::vector<Case> cases{
      {"{", HttpStatus::bad_request, "invalid_json"},
      {"", HttpStatus::bad_request, "invalid_json"},
      {"[1,2]", HttpStatus::bad_request, "invalid_field"},
      {job_body(good + "," + compile + R"(,"colour":"red")"), HttpStatus::bad_request,
       "unknown_field"},
      {job_body(std::string(kGoodShape) + R"(,"dtype":"bf16",)" + compile), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(R"("family":7,)" + std::string(kGoodShape) + R"(,"dtype":"bf16",)" + compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(R"("family":"gemm","dtype":"bf16",)" + compile), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(R"("family":"gemm","shape":[64,64,64],"dtype":"bf16",)" + compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(R"("family":"gemm","shape":{"M":"64","N":64,"K":64},"dtype":"bf16",)" + compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(R"("family":"gemm","shape":{"M":64.5,"N":64,"K":64},"dtype":"bf16",)" + compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(R"("family":"conv2d",)" + std::string(kGoodShape) + R"(,"dtype":"bf16",)" +
                compile),
       HttpStatus::unprocessable_entity, "unknown_family"},
      {job_body(R"("family":"gemm",)" + std::string(kGoodShape) + R"(,"dtype":"fp64",)" + compile),
       HttpStatus::unprocessable_entity, "unknown_dtype"},
      {job_body(R"("family":"gemm","shape":{"M":64,"N":64},"dtype":"bf16",)" + compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":64,"N":64,"K":64,"Q":2},"dtype":"bf16",)" +
                compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":0,"N":64,"K":64},"dtype":"bf16",)" + compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":-8,"N":64,"K":64},"dtype":"bf16",)" + compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":64,"m":64,"N":64,"K":64},"dtype":"bf16",)" +
                compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":1099511627776,"N":64,"K":64},"dtype":"bf16",)" +
                compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":1048576,"N":1048576,"K":64},"dtype":"bf16",)" +
                compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(
           R"("family":"gemm","shape":{"M":18446744073709551615,"N":64,"K":64},"dtype":"bf16",)" +
           compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(good + R"(,"mode":"benchmark")"), HttpStatus::unprocessable_entity, "invalid_mode"},
      {job_body(good + R"(,"mode":3)"), HttpStatus::bad_request, "invalid_field"},
      {job_body(good + R"(,"mode":"compile")"), HttpStatus::unprocessable_entity, "unknown_arch"},
      {job_body(good + R"(,"mode":"compile","arch":"sm_42")"), HttpStatus::unprocessable_entity,
       "unknown_arch"},
      {job_body(good + R"(,"mode":"compile","arch":90)"), HttpStatus::bad_request, "invalid_field"},
      // A known arch no template of the family targets: sm_90 for sm_90a would plan nothing.
      {job_body(good + R"(,"mode":"compile","arch":"sm_90")"), HttpStatus::unprocessable_entity,
       "unsupported_arch"},
      {job_body(good + R"(,"mode":"compile","arch":"sm_75")"), HttpStatus::unprocessable_entity,
       "unsupported_arch"},
      {job_body(good + "," + compile + R"(,"budget":-1)"), HttpStatus::unprocessable_entity,
       "invalid_budget"},
      {job_body(good + "," + compile + R"(,"budget":"3")"), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(good + "," + compile + R"(,"budget":2.5)"), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(good + "," + compile + R"(,"device":true)"), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(good), HttpStatus::service_unavailable, "no_device"},
      {job_body(good + R"(,"mode":"tune","device":"0")"), HttpStatus::service_unavailable,
       "no_device"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    expect_refused(post_job(c.body), c.status, c.code, before);
  }
}

// Numbers a client can send to break a check: overflow (1e99999), not an integer (2.5), past
// 2^53 (1e30 too), negative, above INT64_MAX. Each gets a 4xx whose message names the field; none
// is a 500.
TEST_F(HandlersTest, OutOfRangeNumbersAre4xxNamingTheField) {
  const std::size_t before = job_count();
  const std::string compile = R"("mode":"compile","arch":"sm_90a")";
  const std::string good = std::string(R"("family":"gemm",)") + kGoodShape + R"(,"dtype":"bf16")";
  const auto shape_with_m = [&](const std::string& m) {
    return job_body(R"("family":"gemm","shape":{"M":)" + m + R"(,"N":64,"K":64},"dtype":"bf16",)" +
                    compile);
  };
  const auto configs = [&](const std::string& bm) {
    return job_body(good + "," + compile + R"(,"configs":[{"BM":)" + bm + "}]");
  };
  struct Case {
    std::string body;
    HttpStatus status;
    std::string code;
    std::string field;  // named in the message
  };
  const std::vector<Case> cases{
      {shape_with_m("1e99999"), HttpStatus::bad_request, "invalid_field", "shape.M"},
      {shape_with_m("-1e99999"), HttpStatus::bad_request, "invalid_field", "shape.M"},
      // Past 2^53 a dim would be rounded (expressions evaluate in doubles): refused as such.
      {shape_with_m("1e30"), HttpStatus::unprocessable_entity, "invalid_shape",
       "shape.M = 1e+30 is outside the exact integer range"},
      {shape_with_m("9007199254740993"), HttpStatus::unprocessable_entity, "invalid_shape",
       "shape.M = 9007199254740993 is outside the exact integer range"},
      {shape_with_m("2.5"), HttpStatus::bad_request, "invalid_field", "shape.M"},
      {shape_with_m("-1"), HttpStatus::unprocessable_entity, "invalid_shape", "M"},
      {shape_with_m("18446744073709551616"), HttpStatus::unprocessable_entity, "invalid_shape",
       "shape.M"},
      {job_body(good + "," + compile + R"(,"budget":1e99999)"), HttpStatus::bad_request,
       "invalid_field", "budget"},
      {job_body(good + "," + compile + R"(,"budget":1e30)"), HttpStatus::bad_request,
       "invalid_field", "budget"},
      {job_body(good + "," + compile + R"(,"budget":18446744073709551615)"),
       HttpStatus::unprocessable_entity, "invalid_budget", "budget"},
      {job_body(good + "," + compile + R"(,"device":-1)"), HttpStatus::bad_request, "invalid_field",
       "device"},
      {job_body(good + "," + compile + R"(,"device":1e99999)"), HttpStatus::bad_request,
       "invalid_field", "device"},
      {configs("1e99999"), HttpStatus::bad_request, "invalid_field", "configs[0].BM"},
      {configs("1e30"), HttpStatus::bad_request, "invalid_configs", "configs[0].BM"},
      {configs("2.5"), HttpStatus::bad_request, "invalid_configs", "configs[0].BM"},
      {configs("18446744073709551615"), HttpStatus::bad_request, "invalid_configs",
       "configs[0].BM"},
      {configs(R"("64")"), HttpStatus::bad_request, "invalid_configs", "configs[0].BM"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiResponse response = post_job(c.body);
    expect_refused(response, c.status, c.code, before);
    EXPECT_NE(response.json()["error"]["message"].get<std::string>().find(c.field),
              std::string::npos)
        << response.body;
  }
}

// Bodies built to crash the parser or bloat a message: deep nesting (once a SIGSEGV), NUL padding
// and trailing bytes, and huge strings where a message would repeat them.
TEST_F(HandlersTest, HostileBodiesAre400WithShortMessages) {
  const std::size_t before = job_count();
  const std::string compile = R"("mode":"compile","arch":"sm_90a")";
  const std::string good = std::string(R"("family":"gemm",)") + kGoodShape + R"(,"dtype":"bf16")";
  const std::string huge(200'000, 'w');
  struct Case {
    std::string body;
    HttpStatus status;
    std::string code;
  };
  const std::vector<Case> cases{
      {std::string(120'000, '['), HttpStatus::bad_request, "nesting_too_deep"},
      {job_body(R"("family":"gemm","shape":{"M":)" + std::string(100'000, '[') +
                std::string(100'000, ']') + R"(,"N":64,"K":64},"dtype":"bf16",)" + compile),
       HttpStatus::bad_request, "nesting_too_deep"},
      {job_body(good + "," + compile + R"(,"family":)" + std::string(70, '[') +
                std::string(70, ']')),
       HttpStatus::bad_request, "nesting_too_deep"},
      {job_body(good + "," + compile) + std::string(64, '\0'), HttpStatus::bad_request,
       "invalid_json"},
      {job_body(good + "," + compile) + "{}", HttpStatus::bad_request, "invalid_json"},
      {job_body(good + "," + compile) + " trailing", HttpStatus::bad_request, "invalid_json"},
      {R"({"family":")" + huge, HttpStatus::bad_request, "invalid_json"},
      {job_body(R"("family":")" + huge + R"(",)" + std::string(kGoodShape) + R"(,"dtype":"bf16",)" +
                compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(good + R"(,"mode":"compile","arch":")" + huge + R"(")"), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(good + "," + compile + R"(,"device":")" + huge + R"(")"), HttpStatus::bad_request,
       "invalid_field"},
      {job_body(good + "," + compile + R"(,")" + huge + R"(":1)"), HttpStatus::bad_request,
       "unknown_field"},
      {job_body(R"("family":"gemm","shape":{"M":64,"N":64,"K":64,")" + huge +
                R"(":1},"dtype":"bf16",)" + compile),
       HttpStatus::unprocessable_entity, "invalid_shape"},
      {job_body(R"("family":"gemm","shape":{"M":")" + huge + R"(","N":64,"K":64},"dtype":"bf16",)" +
                compile),
       HttpStatus::bad_request, "invalid_field"},
      {job_body(good + R"(,"mode":")" + std::string(100, 'm') + R"(")"),
       HttpStatus::unprocessable_entity, "invalid_mode"},
      {job_body(good + "," + compile + R"(,"configs":[{"template":")" + huge + R"("}])"),
       HttpStatus::bad_request, "invalid_configs"},
      {job_body(good + "," + compile + R"(,"configs":")" + huge + R"(")"), HttpStatus::bad_request,
       "invalid_configs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.substr(0, 120));
    const ApiResponse response = post_job(c.body);
    expect_refused(response, c.status, c.code, before);
    EXPECT_LT(response.body.size(), 400u) << response.body.substr(0, 600);
  }
}

TEST_F(HandlersTest, QueryNumbersOutOfRangeAre4xx) {
  const std::string best = "/v1/best?family=gemm&dtype=bf16&N=64&K=64&M=";
  for (const std::string m : {"1e99999", "99999999999999999999", "2.5", "0x40"})
    expect_refused(call(http::verb::get, best + m), HttpStatus::bad_request, "invalid_parameter",
                   0);
  expect_refused(call(http::verb::get, best + "-1"), HttpStatus::unprocessable_entity,
                 "invalid_shape", 0);
  expect_refused(call(http::verb::get, "/v1/history?limit=99999999999999999999"),
                 HttpStatus::bad_request, "invalid_parameter", 0);
  const ApiResponse long_id = call(http::verb::get, "/v1/jobs/" + std::string(5000, '9'));
  expect_refused(long_id, HttpStatus::bad_request, "invalid_id", 0);
  EXPECT_LT(long_id.body.size(), 200u) << long_id.body.substr(0, 300);
}

TEST_F(HandlersTest, UnknownFamilyMessageListsTheKnownOnes) {
  const auto response = post_job(job_body(R"("family":"gem",)" + std::string(kGoodShape) +
                                          R"(,"dtype":"bf16","mode":"compile","arch":"sm_90a")"));
  EXPECT_EQ(response.status, HttpStatus::unprocessable_entity);
  EXPECT_NE(response.json()["error"]["message"].get<std::string>().find("gemm"), std::string::npos);
}

TEST_F(HandlersTest, TuneWithoutGpuNamesTheProbeErrorAndTheWayOut) {
  const auto response =
      post_job(job_body(R"("family":"gemm",)" + std::string(kGoodShape) + R"(,"dtype":"bf16")"));
  ASSERT_EQ(response.status, HttpStatus::service_unavailable);
  const std::string message = response.json()["error"]["message"];
  EXPECT_NE(message.find("no GPU on this host (libcuda.so.1 not found)"), std::string::npos);
  EXPECT_NE(message.find(R"("mode":"compile")"), std::string::npos);
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(HandlersTest, OversizedBodyIs413) {
  context_.max_body_bytes = 64;
  const std::string body = job_body(R"("family":"gemm",)" + std::string(kGoodShape) +
                                    R"(,"dtype":"bf16","mode":"compile","arch":"sm_90a")");
  ASSERT_GT(body.size(), 64u);
  expect_refused(post_job(body), HttpStatus::payload_too_large, "body_too_large", 0);
}

TEST_F(HandlersTest, CompileJobIsCreatedQueuedWithDimsMatchedCaseInsensitively) {
  const auto response = post_job(
      R"({"family":"gemm","shape":{"m":100,"n":200,"k":72},"dtype":"fp16",
          "mode":"compile","arch":"sm_100a","budget":5})");
  ASSERT_EQ(response.status, HttpStatus::accepted) << response.body;
  const auto job = response.json();
  const auto id = job["id"].get<std::int64_t>();
  EXPECT_EQ(job["status"], "queued");
  EXPECT_EQ(job["mode"], "compile");
  EXPECT_EQ(job["arch"], "sm_100a");
  EXPECT_EQ(job["budget"], 5);
  EXPECT_EQ(job["shape"], (nlohmann::json{{"M", 100}, {"N", 200}, {"K", 72}}));
  EXPECT_TRUE(job["device_uuid"].is_null());
  EXPECT_TRUE(job["best"].is_null());
  EXPECT_EQ(job_count(), 1u);
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0],
            std::make_pair(std::string("Location"), "/v1/jobs/" + std::to_string(id)));

  const auto stored = store_.job(id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->shape_key, "K=72,M=100,N=200");
  EXPECT_EQ(stored->dtype, "fp16");
}

TEST_F(HandlersTest, JobIdsAreChecked) {
  const auto id = create_compile_job();
  EXPECT_EQ(call(http::verb::get, "/v1/jobs/" + std::to_string(id)).status, HttpStatus::ok);
  for (const std::string bad : {"abc", "0", "-3", "1.5", "99999999999999999999999"})
    expect_refused(call(http::verb::get, "/v1/jobs/" + bad), HttpStatus::bad_request, "invalid_id",
                   1);
  expect_refused(call(http::verb::get, "/v1/jobs/999"), HttpStatus::not_found, "unknown_job", 1);
  expect_refused(call(http::verb::get, "/v1/jobs/999/variants"), HttpStatus::not_found,
                 "unknown_job", 1);
  expect_refused(call(http::verb::delete_, "/v1/jobs/999"), HttpStatus::not_found, "unknown_job",
                 1);
  expect_refused(call(http::verb::get, "/v1/variants/x/kernel"), HttpStatus::bad_request,
                 "invalid_id", 1);
  expect_refused(call(http::verb::get, "/v1/variants/12345/kernel"), HttpStatus::not_found,
                 "unknown_variant", 1);
}

TEST_F(HandlersTest, GetJobReportsProgressAndVariants) {
  const auto id = create_compile_job();
  const auto job = call(http::verb::get, "/v1/jobs/" + std::to_string(id)).json();
  EXPECT_EQ(job["id"], id);
  EXPECT_EQ(job["status"], "queued");
  ASSERT_TRUE(job.contains("progress"));
  EXPECT_EQ(job["progress"]["total"], 0);

  const auto variants = call(http::verb::get, "/v1/jobs/" + std::to_string(id) + "/variants");
  ASSERT_EQ(variants.status, HttpStatus::ok);
  EXPECT_EQ(variants.json()["variants"].size(), 0u);
  expect_refused(call(http::verb::get, "/v1/jobs/" + std::to_string(id) + "/variants?status=x"),
                 HttpStatus::bad_request, "invalid_parameter", 1);
  expect_refused(call(http::verb::get, "/v1/jobs/" + std::to_string(id) + "?verbose=1"),
                 HttpStatus::bad_request, "unknown_parameter", 1);
}

TEST_F(HandlersTest, CancelAQueuedJobThenCancellingAgainConflicts) {
  const auto id = create_compile_job();
  const auto target = "/v1/jobs/" + std::to_string(id);
  const auto first = call(http::verb::delete_, target);
  ASSERT_EQ(first.status, HttpStatus::ok) << first.body;
  EXPECT_EQ(first.json()["status"], "cancelled");
  EXPECT_EQ(first.json()["cancel_requested"], true);
  expect_refused(call(http::verb::delete_, target), HttpStatus::conflict, "job_finished", 1);
}

TEST_F(HandlersTest, BestAndParetoQueriesAreValidated) {
  const std::string shape = "&M=4096&N=4096&K=4096";
  expect_refused(call(http::verb::get, "/v1/best?dtype=bf16" + shape), HttpStatus::bad_request,
                 "missing_parameter", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=gemm" + shape), HttpStatus::bad_request,
                 "missing_parameter", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=nope&dtype=bf16" + shape),
                 HttpStatus::not_found, "unknown_family", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=gemm&dtype=int4" + shape),
                 HttpStatus::unprocessable_entity, "unknown_dtype", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=4096&N=4096"),
                 HttpStatus::unprocessable_entity, "invalid_shape", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=4k&N=1&K=1"),
                 HttpStatus::bad_request, "invalid_parameter", 0);
  expect_refused(call(http::verb::get, "/v1/pareto?family=gemm&dtype=bf16&M=0&N=1&K=1"),
                 HttpStatus::unprocessable_entity, "invalid_shape", 0);
  expect_refused(call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&X=3" + shape),
                 HttpStatus::bad_request, "unknown_parameter", 0);

  const auto untuned = call(http::verb::get, "/v1/best?family=gemm&dtype=bf16" + shape);
  expect_refused(untuned, HttpStatus::not_found, "not_tuned", 0);
  EXPECT_NE(untuned.json()["error"]["message"].get<std::string>().find(
                "nothing tuned for gemm bf16 K=4096,M=4096,N=4096"),
            std::string::npos);
  const auto pareto = call(http::verb::get, "/v1/pareto?family=gemm&dtype=bf16&m=64&n=64&k=64");
  ASSERT_EQ(pareto.status, HttpStatus::ok) << pareto.body;
  EXPECT_EQ(pareto.json()["front"].size(), 0u);
}

// An arch the family has no template for, or one kerntune does not know, is refused naming the
// ones that would work; never an empty job that ends "done".
TEST_F(HandlersTest, ArchErrorsListTheValidArchs) {
  const std::string good = std::string(R"({"family":"gemm",)") + kGoodShape +
                           R"(,"dtype":"bf16","mode":"compile","arch":)";
  const auto sm90 = post_job(good + R"("sm_90"})");
  ASSERT_EQ(sm90.status, HttpStatus::unprocessable_entity) << sm90.body;
  const std::string message = sm90.json()["error"]["message"];
  EXPECT_NE(message.find("sm_90a, sm_100a"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean sm_90a?"), std::string::npos) << message;
  const auto unknown = post_job(good + R"("sm_42"})");
  ASSERT_EQ(unknown.status, HttpStatus::unprocessable_entity) << unknown.body;
  EXPECT_NE(unknown.body.find("known archs: sm_80"), std::string::npos) << unknown.body;
  const auto family = post_job(R"({"family":"gemmm",)" + std::string(kGoodShape) +
                               R"(,"dtype":"bf16","mode":"compile","arch":"sm_90a"})");
  EXPECT_EQ(family.status, HttpStatus::unprocessable_entity) << family.body;
  EXPECT_NE(family.body.find("known families: "), std::string::npos) << family.body;
  EXPECT_NE(family.body.find("gemm"), std::string::npos) << family.body;
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(HandlersTest, HistoryFiltersAndValidates) {
  const auto first = create_compile_job();
  const auto second = create_compile_job();
  call(http::verb::delete_, "/v1/jobs/" + std::to_string(first));

  const auto all = call(http::verb::get, "/v1/history").json();
  ASSERT_EQ(all["jobs"].size(), 2u);
  EXPECT_EQ(all["jobs"][0]["id"], second);  // newest first
  EXPECT_TRUE(all["jobs"][0].contains("progress"));

  const auto cancelled = call(http::verb::get, "/v1/history?status=cancelled").json();
  ASSERT_EQ(cancelled["jobs"].size(), 1u);
  EXPECT_EQ(cancelled["jobs"][0]["id"], first);
  EXPECT_EQ(call(http::verb::get, "/v1/history?limit=1&offset=1").json()["jobs"][0]["id"], first);
  // A typo is not "no jobs": a family neither loaded nor in the store is unknown ...
  const auto typo = call(http::verb::get, "/v1/history?family=gemmm");
  EXPECT_EQ(typo.status, HttpStatus::not_found) << typo.body;
  EXPECT_EQ(typo.json()["error"]["code"], "unknown_family");
  EXPECT_NE(typo.body.find("known families: "), std::string::npos) << typo.body;
  // ... while the jobs of a family no longer loaded are still listed.
  NewJob retired;
  retired.family = "retired_family";
  retired.shape = {{"M", 8}};
  retired.dtype = "bf16";
  retired.mode = JobMode::compile;
  retired.arch = "sm_90a";
  store_.create_job(retired);
  const auto old = call(http::verb::get, "/v1/history?family=retired_family");
  ASSERT_EQ(old.status, HttpStatus::ok) << old.body;
  EXPECT_EQ(old.json()["jobs"].size(), 1u);
  EXPECT_EQ(call(http::verb::get, "/v1/history?family=gemm&status=failed").json()["jobs"].size(),
            0u);

  for (const std::string bad :
       {"status=finished", "limit=0", "limit=abc", "limit=5000", "offset=-1", "sort=id"})
    EXPECT_EQ(call(http::verb::get, "/v1/history?" + bad).status, HttpStatus::bad_request) << bad;
}

TEST_F(HandlersTest, VariantListsArePagedWithACursor) {
  const auto job = create_compile_job();
  std::vector<VariantRecord> plan;
  for (int bm = 1; bm <= 250; ++bm)
    plan.push_back(bm % 5 == 0 ? test::planned(bm, VariantStatus::unsupported_arch, "sm_100a")
                               : test::planned(bm));
  store_.plan_variants(job, plan, {{"gemm_mma", "constraint failed: BM <= 256", 7000, {}}});
  const std::string base = "/v1/jobs/" + std::to_string(job) + "/variants";

  const auto first = call(http::verb::get, base).json();
  EXPECT_EQ(first["variants"].size(), 100u);
  EXPECT_EQ(first["count"], 100);
  EXPECT_EQ(first["total"], 250);
  EXPECT_EQ(first["skipped"], 7000) << "pruned configurations have no rows to list";
  ASSERT_TRUE(first["next"].is_string());

  std::vector<std::int64_t> ids;
  nlohmann::json next = nullptr;
  int pages = 0;
  do {
    const std::string target =
        base + (next.is_string() ? "?cursor=" + next.get<std::string>() : std::string());
    const auto page = call(http::verb::get, target).json();
    for (const auto& v : page["variants"]) ids.push_back(v["id"].get<std::int64_t>());
    next = page["next"];
    ++pages;
  } while (next.is_string() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(ids.size(), 250u);
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);

  // Filters and paging together: 50 unsupported, in pages of 20; skipped counts the whole job.
  std::size_t unsupported = 0;
  next = nullptr;
  pages = 0;
  do {
    const auto page =
        call(http::verb::get, base + "?status=unsupported_arch&limit=20" +
                                  (next.is_string() ? "&cursor=" + next.get<std::string>() : ""))
            .json();
    EXPECT_EQ(page["total"], 50);
    EXPECT_EQ(page["skipped"], 7200);
    for (const auto& v : page["variants"]) {
      EXPECT_EQ(v["status"], "unsupported_arch");
      ++unsupported;
    }
    next = page["next"];
    ++pages;
  } while (next.is_string() && pages < 10);
  EXPECT_EQ(unsupported, 50u);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(call(http::verb::get, base + "?exclude_pruned=1&limit=1000").json()["count"], 200);

  // Pruned configurations are summarised on the job, not listed.
  const auto pruned = call(http::verb::get, base + "?status=pruned");
  expect_refused(pruned, HttpStatus::bad_request, "invalid_parameter", job_count());
  EXPECT_NE(pruned.json()["error"]["message"].get<std::string>().find("counted"),
            std::string::npos);
  const auto view = call(http::verb::get, "/v1/jobs/" + std::to_string(job)).json();
  ASSERT_EQ(view["pruned"].size(), 1u);
  EXPECT_EQ(view["pruned"][0]["count"], 7000);
  EXPECT_EQ(view["pruned"][0]["template"], "gemm_mma");
  EXPECT_EQ(view["progress"]["by_status"]["pruned"], 7000);

  const auto too_many = call(http::verb::get, base + "?limit=1001");
  expect_refused(too_many, HttpStatus::bad_request, "invalid_parameter", job_count());
  EXPECT_NE(too_many.json()["error"]["message"].get<std::string>().find("1000"), std::string::npos);
  for (const std::string bad : {"cursor=abc", "cursor=0", "cursor=-5", "cursor=", "limit=0"})
    EXPECT_EQ(call(http::verb::get, base + "?" + bad).status, HttpStatus::bad_request) << bad;
}

TEST_F(HandlersTest, HistoryIsPagedWithACursorAndKeepsOffset) {
  std::vector<std::int64_t> created;
  for (int i = 0; i < 3; ++i) created.push_back(create_compile_job());
  const auto first = call(http::verb::get, "/v1/history?limit=2").json();
  ASSERT_EQ(first["jobs"].size(), 2u);
  EXPECT_EQ(first["jobs"][0]["id"], created[2]);
  ASSERT_TRUE(first["next"].is_string());
  const auto second =
      call(http::verb::get, "/v1/history?limit=2&cursor=" + first["next"].get<std::string>())
          .json();
  ASSERT_EQ(second["jobs"].size(), 1u);
  EXPECT_EQ(second["jobs"][0]["id"], created[0]);
  EXPECT_TRUE(second["next"].is_null());
  EXPECT_EQ(call(http::verb::get, "/v1/history").json()["limit"], 100);
  EXPECT_EQ(call(http::verb::get, "/v1/history?offset=1&limit=1").json()["jobs"][0]["id"],
            created[1]);
  EXPECT_EQ(call(http::verb::get, "/v1/history?offset=1&cursor=" + first["next"].get<std::string>())
                .status,
            HttpStatus::bad_request);
  EXPECT_EQ(call(http::verb::get, "/v1/history?limit=1001").status, HttpStatus::bad_request);
}

TEST_F(HandlersTest, FamiliesDevicesAndHealth) {
  const auto families = call(http::verb::get, "/v1/families").json();
  const auto& list = families["families"];
  const auto gemm = std::find_if(list.begin(), list.end(),
                                 [](const nlohmann::json& f) { return f["name"] == "gemm"; });
  ASSERT_NE(gemm, list.end());
  EXPECT_EQ((*gemm)["dims"].size(), 3u);
  EXPECT_NE(std::find((*gemm)["dtypes"].begin(), (*gemm)["dtypes"].end(), "bf16"),
            (*gemm)["dtypes"].end());
  ASSERT_FALSE((*gemm)["templates"].empty());
  EXPECT_FALSE((*gemm)["templates"][0]["axes"].empty());
  EXPECT_GT((*gemm)["templates"][0]["space_size"].get<std::int64_t>(), 1);
  // What a correct output is, as the manifest says it, with the magnitude term's constant.
  EXPECT_EQ((*gemm)["tolerance"]["bf16"],
            (nlohmann::json{
                {"atol", 0.03125}, {"rtol", 0.0078125}, {"rel_l2", 0.0078125}, {"magnitude", 16}}));
  EXPECT_TRUE(families["errors"].is_array());

  const auto devices = call(http::verb::get, "/v1/devices").json();
  EXPECT_EQ(devices["devices"].size(), 0u);
  EXPECT_EQ(devices["error"], "libcuda.so.1 not found");

  const auto health = call(http::verb::get, "/healthz").json();
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["devices"], 0);
}

TEST_F(HandlersTest, UnknownRoutesAndMethods) {
  expect_refused(call(http::verb::get, "/v1/nothing"), HttpStatus::not_found, "not_found", 0);
  expect_refused(call(http::verb::get, "/v1/jobs/"), HttpStatus::not_found, "not_found", 0);
  const auto put = call(http::verb::put, "/v1/jobs");
  expect_refused(put, HttpStatus::method_not_allowed, "method_not_allowed", 0);
  ASSERT_EQ(put.headers.size(), 1u);
  EXPECT_EQ(put.headers[0].first, "Allow");
  EXPECT_EQ(put.headers[0].second, "POST");
}

// Results written the way the runner writes them come back through best, pareto, the job and
// the kernel download.
TEST_F(HandlersTest, StoredResultsAreServed) {
  DeviceInfo device = fake_h100(0, "GPU-1111");
  store_.upsert_device(device);
  NewJob job;
  job.family = "gemm";
  job.shape = {{"M", 256}, {"N", 256}, {"K", 128}};
  job.dtype = "bf16";
  job.mode = JobMode::tune;
  job.arch = "sm_90a";
  job.device_uuid = device.uuid;
  job.device_name = device.name;
  const auto job_id = store_.create_job(job);
  store_.set_job_reference(job_id, 150.0);

  std::vector<VariantRecord> planned(2);
  planned[0].template_name = planned[1].template_name = "mma_multistage";
  planned[0].config = {{"BM", 128}, {"BN", 128}};
  planned[1].config = {{"BM", 64}, {"BN", 128}};
  for (auto& v : planned) v.config_key = canonical_key(v.config);
  const auto rows = store_.plan_variants(job_id, planned);
  ASSERT_EQ(rows.size(), 2u);

  KernelBlob blob;
  blob.key = "k-test";
  blob.arch = "sm_90a";
  blob.kernel = "gemm_kernel";
  blob.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\x01'};
  store_.put_kernel(blob);
  CompileResult compiled;
  compiled.ok = true;
  compiled.key = blob.key;
  compiled.resources.registers = 168;
  store_.record_compile(rows[0].id, compiled, 256, 49152);

  for (std::size_t i = 0; i < rows.size(); ++i) {
    VariantOutcome outcome;
    outcome.status = VariantStatus::measured;
    outcome.timing = TimingSummary{};
    outcome.timing->median_us = i == 0 ? 100.0 : 120.0;
    outcome.error = ErrorSummary{};
    outcome.tflops = 42.0;
    outcome.speedup = 150.0 / outcome.timing->median_us;
    store_.record_outcome(rows[i].id, outcome);
  }

  const auto best = call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&m=256&n=256&k=128");
  ASSERT_EQ(best.status, HttpStatus::ok) << best.body;
  const auto b = best.json();
  EXPECT_EQ(b["variant_id"], rows[0].id);
  EXPECT_EQ(b["job_id"], job_id);
  EXPECT_DOUBLE_EQ(b["median_us"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(b["speedup_vs_reference"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(b["reference_us"].get<double>(), 150.0);
  EXPECT_EQ(b["device"], device.name);
  EXPECT_EQ(b["config"], (nlohmann::json{{"BM", 128}, {"BN", 128}}));
  EXPECT_EQ(b["reference"], "cublas_gemm");

  // "h100" resolves to the stored device model; another model has nothing.
  EXPECT_EQ(
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=256&N=256&K=128&device=h100").status,
      HttpStatus::ok);
  EXPECT_EQ(call(http::verb::get,
                 "/v1/best?family=gemm&dtype=bf16&M=256&N=256&K=128&device=NVIDIA%20B200")
                .status,
            HttpStatus::not_found);
  EXPECT_EQ(call(http::verb::get, "/v1/best?family=gemm&dtype=fp16&M=256&N=256&K=128").status,
            HttpStatus::not_found);

  const auto pareto =
      call(http::verb::get, "/v1/pareto?family=gemm&dtype=bf16&M=256&N=256&K=128").json();
  ASSERT_FALSE(pareto["front"].empty());
  EXPECT_EQ(pareto["front"][0]["id"], rows[0].id);

  const auto job_view = call(http::verb::get, "/v1/jobs/" + std::to_string(job_id)).json();
  EXPECT_EQ(job_view["best"]["id"], rows[0].id);
  EXPECT_EQ(job_view["progress"]["by_status"]["measured"], 2);

  const auto variants =
      call(http::verb::get, "/v1/jobs/" + std::to_string(job_id) + "/variants").json();
  ASSERT_EQ(variants["variants"].size(), 2u);
  EXPECT_EQ(variants["variants"][0]["registers"], 168);
  EXPECT_FALSE(variants["variants"][0].contains("compile_log"));
  const auto with_log =
      call(http::verb::get, "/v1/jobs/" + std::to_string(job_id) + "/variants?log=1").json();
  EXPECT_TRUE(with_log["variants"][0].contains("compile_log"));

  const auto kernel =
      call(http::verb::get, "/v1/variants/" + std::to_string(rows[0].id) + "/kernel");
  ASSERT_EQ(kernel.status, HttpStatus::ok) << kernel.body;
  EXPECT_EQ(kernel.content_type, "application/octet-stream");
  EXPECT_EQ(kernel.body, std::string(blob.cubin.begin(), blob.cubin.end()));
  expect_refused(call(http::verb::get, "/v1/variants/" + std::to_string(rows[1].id) + "/kernel"),
                 HttpStatus::not_found, "no_kernel", 1);

  // Before a final comparison, the first pass decides: ours (100 us) against the job's baseline
  // (150 us, its reference_us) without an interval.
  EXPECT_EQ(b["baseline_wins"], false);
  EXPECT_EQ(b["verdict"]["answer"], "ours");
  EXPECT_EQ(b["verdict"]["basis"], "first_pass");
  EXPECT_EQ(b["best_own"]["variant_id"], rows[0].id);

  // The final comparison (the slower first-pass variant wins interleaved): the job answers with
  // its winner, its interleaved median and its speedup interval over the baseline; /v1/best with
  // the baseline, since 1.02x [0.995, 1.03] is a tie, and with our winner beside it.
  InterleavedResult final;
  final.variant_ids = {rows[0].id, rows[1].id};
  final.timings = {TimingSummary{}, TimingSummary{}};
  final.timings[0].median_us = 104.0;
  final.timings[1].median_us = 99.0;
  final.winner_variant_id = rows[1].id;
  final.runner_up_variant_id = rows[0].id;
  final.baseline_timing = TimingSummary{};
  final.baseline_timing->median_us = 101.0;
  final.baseline = {{"kind", "cublaslt_gemm"}, {"algorithm_index", 4}};
  final.speedups = {{0.97, 0.96, 0.98}, {1.02, 0.995, 1.03}};
  store_.record_winner_comparison(job_id, final);
  const auto final_answer =
      call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&m=256&n=256&k=128").json();
  EXPECT_EQ(final_answer["baseline_wins"], true);
  EXPECT_EQ(final_answer["verdict"]["answer"], "baseline");
  EXPECT_EQ(final_answer["verdict"]["basis"], "final_comparison");
  EXPECT_EQ(final_answer["template"], "cublaslt_gemm");
  EXPECT_TRUE(final_answer["variant_id"].is_null());
  EXPECT_EQ(final_answer["config"], (nlohmann::json{{"algorithm_index", 4}}));
  EXPECT_EQ(final_answer["baseline_call"]["algorithm_index"], 4);
  EXPECT_DOUBLE_EQ(final_answer["median_us"].get<double>(), 101.0);
  EXPECT_EQ(final_answer["job_id"], job_id);
  const auto final_best = final_answer["best_own"];
  EXPECT_EQ(final_best["variant_id"], rows[1].id);
  EXPECT_DOUBLE_EQ(final_best["median_us"].get<double>(), 99.0);
  EXPECT_DOUBLE_EQ(final_best["first_pass_median_us"].get<double>(), 120.0);
  EXPECT_DOUBLE_EQ(final_best["speedup"].get<double>(), 1.02);
  EXPECT_DOUBLE_EQ(final_best["speedup_low"].get<double>(), 0.995);
  EXPECT_EQ(final_best["faster_than_baseline"], false);  // 0.995 < 1: a tie, not a win
  EXPECT_DOUBLE_EQ(final_best["baseline_median_us"].get<double>(), 101.0);
  EXPECT_EQ(final_answer["baseline"], "cublaslt_gemm");
  const auto final_job = call(http::verb::get, "/v1/jobs/" + std::to_string(job_id)).json();
  EXPECT_EQ(final_job["best"]["id"], rows[1].id);
  EXPECT_EQ(final_job["best"]["final"]["baseline"]["algorithm_index"], 4);
  EXPECT_EQ(final_job["comparison"]["final"]["winner_variant_id"], rows[1].id);
  EXPECT_EQ(final_job["comparison"]["baseline_wins"], true);

  // A finished job cannot be cancelled.
  store_.set_job_status(job_id, JobStatus::done);
  expect_refused(call(http::verb::delete_, "/v1/jobs/" + std::to_string(job_id)),
                 HttpStatus::conflict, "job_finished", 1);
}

// Issue 14: the baseline is a candidate of every problem. /v1/best answers with it when our best
// is not shown faster in the final comparison, with our best beside it; with ours when the
// interval clears 1; and with the baseline alone for a job that measured no variant.
TEST_F(HandlersTest, BestAnswersWithTheBaselineUnlessOursIsShownFaster) {
  const Shape shape{{"M", 128}, {"N", 4096}, {"K", 7168}};
  const std::string query = "/v1/best?family=gemm&dtype=bf16&M=128&N=4096&K=7168";
  const auto slower =
      test::seed_compared_job(store_, shape, 30.2, 30.5, 26.6, {0.872, 0.868, 0.875});
  const auto lost = call(http::verb::get, query);
  ASSERT_EQ(lost.status, HttpStatus::ok) << lost.body;
  const auto answer = lost.json();
  EXPECT_EQ(answer["baseline_wins"], true);
  EXPECT_EQ(answer["verdict"]["answer"], "baseline");
  EXPECT_EQ(answer["verdict"]["basis"], "final_comparison");
  EXPECT_NE(answer["verdict"]["reason"].get<std::string>().find("the baseline is faster"),
            std::string::npos);
  EXPECT_EQ(answer["template"], "cublaslt_gemm");
  EXPECT_EQ(answer["config"],
            (nlohmann::json{
                {"algorithm_index", 3}, {"id", 66}, {"split_k", 1}, {"stages", 35}, {"tile", 24}}));
  EXPECT_EQ(answer["baseline_call"]["library"], "cublasLt 130100");
  EXPECT_DOUBLE_EQ(answer["median_us"].get<double>(), 26.6);
  EXPECT_DOUBLE_EQ(answer["first_pass_median_us"].get<double>(), 26.6);
  EXPECT_TRUE(answer["variant_id"].is_null());
  EXPECT_TRUE(answer["speedup"].is_null());
  EXPECT_EQ(answer["job_id"], slower.job_id);
  EXPECT_EQ(answer["device"], "NVIDIA H100 80GB HBM3");
  // Same flops as our variant (500 TFLOP/s at 30.2 us first pass): the baseline's rate follows.
  EXPECT_NEAR(answer["tflops"].get<double>(), 500 * 30.2 / 26.6, 1e-9);
  EXPECT_EQ(answer["timing"]["median_us"], 26.6);
  EXPECT_EQ(answer["best_own"]["variant_id"], slower.variant_id);
  EXPECT_EQ(answer["best_own"]["template"], "wgmma_tma_ws");
  EXPECT_DOUBLE_EQ(answer["best_own"]["median_us"].get<double>(), 30.5);
  EXPECT_DOUBLE_EQ(answer["best_own"]["speedup_high"].get<double>(), 0.875);
  // The front stays ours: the baseline is an answer, not a variant.
  const auto front = call(http::verb::get, "/v1/pareto?family=gemm&dtype=bf16&M=128&N=4096&K=7168");
  ASSERT_EQ(front.json()["front"].size(), 1u);
  EXPECT_EQ(front.json()["front"][0]["id"], slower.variant_id);
  const auto job = call(http::verb::get, "/v1/jobs/" + std::to_string(slower.job_id)).json();
  EXPECT_EQ(job["comparison"]["baseline_wins"], true);

  // A later job whose variant is shown faster (1.06x [1.04, 1.08]) is the answer.
  const auto faster = test::seed_compared_job(store_, shape, 25.0, 25.1, 26.6, {1.06, 1.04, 1.08});
  const auto won = call(http::verb::get, query).json();
  EXPECT_EQ(won["baseline_wins"], false);
  EXPECT_EQ(won["verdict"]["answer"], "ours");
  EXPECT_EQ(won["variant_id"], faster.variant_id);
  EXPECT_EQ(won["template"], "wgmma_tma_ws");
  EXPECT_DOUBLE_EQ(won["median_us"].get<double>(), 25.1);
  EXPECT_EQ(won["faster_than_baseline"], true);
  EXPECT_EQ(won["best_own"]["variant_id"], faster.variant_id);
  EXPECT_EQ(call(http::verb::get, "/v1/jobs/" + std::to_string(faster.job_id))
                .json()["comparison"]["baseline_wins"],
            false);

  // No variant of ours measured (all pruned), the baseline timed alone: it is the answer.
  const std::string unaligned = "/v1/best?family=gemm&dtype=bf16&M=16&N=4096&K=4097";
  EXPECT_EQ(call(http::verb::get, unaligned).status, HttpStatus::not_found);
  const std::int64_t alone =
      test::seed_baseline_only_job(store_, {{"M", 16}, {"N", 4096}, {"K", 4097}}, 27.3);
  const auto only = call(http::verb::get, unaligned);
  ASSERT_EQ(only.status, HttpStatus::ok) << only.body;
  const auto baseline = only.json();
  EXPECT_EQ(baseline["baseline_wins"], true);
  EXPECT_EQ(baseline["verdict"]["basis"], "no_variant");
  EXPECT_EQ(baseline["template"], "cublaslt_gemm");
  EXPECT_EQ(baseline["config"]["algorithm_index"], 1);
  EXPECT_DOUBLE_EQ(baseline["median_us"].get<double>(), 27.3);
  EXPECT_EQ(baseline["job_id"], alone);
  EXPECT_TRUE(baseline["best_own"].is_null());
  EXPECT_TRUE(baseline["tflops"].is_null());
  EXPECT_TRUE(
      call(http::verb::get, "/v1/jobs/" + std::to_string(alone)).json()["comparison"].is_null());
  // Another device model has nothing.
  EXPECT_EQ(call(http::verb::get, unaligned + "&device=NVIDIA%20H200").status,
            HttpStatus::not_found);
}

// A baseline that failed validation with every candidate is a finding, not a failed job: the job
// answers with its best validated variant, and the job and /v1/best say baseline_failed with the
// reason; no speedup is claimed over a baseline that was none.
TEST_F(HandlersTest, ABaselineThatFailedValidationIsReportedAndOursAnswers) {
  const Shape shape{{"M", 777}, {"N", 4099}, {"K", 16383}};
  const std::string why =
      "the baseline (cublaslt_gemm) computed a wrong result with every candidate it has";
  const auto seeded = test::seed_baseline_failed_job(store_, shape, 812.5, why);
  const auto best = call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=777&N=4099&K=16383");
  ASSERT_EQ(best.status, HttpStatus::ok) << best.body;
  const auto answer = best.json();
  EXPECT_EQ(answer["baseline_wins"], false);
  EXPECT_EQ(answer["verdict"]["answer"], "ours");
  EXPECT_EQ(answer["verdict"]["basis"], "no_baseline");
  EXPECT_EQ(answer["variant_id"], seeded.variant_id);
  EXPECT_EQ(answer["baseline_failed"], why);
  EXPECT_TRUE(answer["speedup"].is_null()) << answer.dump(2);
  const auto job = call(http::verb::get, "/v1/jobs/" + std::to_string(seeded.job_id)).json();
  EXPECT_EQ(job["status"], "done");
  EXPECT_EQ(job["baseline_failed"], why);
  EXPECT_FALSE(job["baselines"]["0"].contains("median_us")) << "no figure rests on it";
  EXPECT_EQ(job["baselines"]["0"]["baseline"]["algorithm_index"], 7);

  // A job whose baseline stood says so too: null.
  const auto fine = test::seed_compared_job(store_, {{"M", 128}, {"N", 128}, {"K", 128}}, 10, 10,
                                            11, {1.1, 1.05, 1.15});
  EXPECT_TRUE(call(http::verb::get, "/v1/jobs/" + std::to_string(fine.job_id))
                  .json()["baseline_failed"]
                  .is_null());
  EXPECT_TRUE(call(http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=128&N=128&K=128")
                  .json()["baseline_failed"]
                  .is_null());
}

// With GPUs present, "device" picks one by ordinal, UUID or name, and tune jobs record it.
class HandlersWithGpusTest : public HandlersTest {
 protected:
  HandlersWithGpusTest()
      : HandlersTest({fake_h100(0, "GPU-aaaa-0000"), fake_h100(1, "GPU-bbbb-1111")}, "") {}

  nlohmann::json submit_tune(const std::string& device_field) {
    const auto response = post_job(job_body(R"("family":"gemm",)" + std::string(kGoodShape) +
                                            R"(,"dtype":"bf16")" + device_field));
    EXPECT_EQ(response.status, HttpStatus::accepted) << response.body;
    return response.json();
  }
};

TEST_F(HandlersWithGpusTest, DeviceSelection) {
  EXPECT_EQ(submit_tune("")["device_uuid"], "GPU-aaaa-0000");
  EXPECT_EQ(submit_tune(R"(,"device":1)")["device_uuid"], "GPU-bbbb-1111");
  EXPECT_EQ(submit_tune(R"(,"device":"1")")["device_uuid"], "GPU-bbbb-1111");
  EXPECT_EQ(submit_tune(R"(,"device":"bbbb-1111")")["device_uuid"], "GPU-bbbb-1111");
  EXPECT_EQ(submit_tune(R"(,"device":"GPU-BBBB-1111")")["device_uuid"], "GPU-bbbb-1111");
  const auto by_name = submit_tune(R"(,"device":"h100")");
  EXPECT_EQ(by_name["device_uuid"], "GPU-aaaa-0000");
  EXPECT_EQ(by_name["device_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(by_name["arch"], "sm_90a");
  EXPECT_EQ(submit_tune(R"(,"arch":"sm_90a")")["arch"], "sm_90a");

  const std::size_t before = job_count();
  const std::string base = std::string(R"("family":"gemm",)") + kGoodShape + R"(,"dtype":"bf16")";
  expect_refused(post_job(job_body(base + R"(,"device":"A100")")), HttpStatus::unprocessable_entity,
                 "unknown_device", before);
  expect_refused(post_job(job_body(base + R"(,"device":7)")), HttpStatus::unprocessable_entity,
                 "unknown_device", before);
  expect_refused(post_job(job_body(base + R"(,"arch":"sm_100a")")),
                 HttpStatus::unprocessable_entity, "arch_mismatch", before);
}

}  // namespace
}  // namespace kt
