// A predicted answer's check on a real GPU (engine/predicted_checks.hpp): kerntuned started as a
// child process with the committed recorded spaces as its predictor's data, asked over HTTP for a
// GEMM shape nobody tuned. Its predicted config is checked on this GPU, on the shape itself,
// against the reference and timed, and the shape stays untuned. (That a check tells a right
// config from a wrong one: DaemonOnGpu, with the faults family.)
#include <chrono>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "client/client_error.hpp"
#include "client/kerntune_client.hpp"
#include "harness/daemon_process.hpp"
#include "support/gpu_fixture.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
namespace http = boost::beast::http;

class PredictedCheckOnGpu : public test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    // The shipped families (gemm among them): no --families, which would replace them.
    daemon_ = std::make_unique<harness::DaemonProcess>(
        test::binary_dir() / "kerntuned", dir_.path() / "kerntune.db",
        dir_.path() / "kerntuned.log",
        std::vector<std::string>{
            "--worker", (test::binary_dir() / "kerntune-worker").string(), "--predictor-spaces",
            (test::source_dir() / "tests/data/spaces-2026-12").string(), "--compile-threads", "4"});
    daemon_->wait_healthy(180s);
    client_ = std::make_unique<Client>(daemon_->url(), 60s);
  }

  // GET target until `done(body)` holds; the last body (a test failure past the limit).
  template <typename Done>
  nlohmann::json poll(const std::string& target, Done done, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto next_note = std::chrono::steady_clock::now() + 15s;
    nlohmann::json body;
    for (;;) {
      try {
        body = client_->call(http::verb::get, target);
        if (done(body)) return body;
      } catch (const ClientError& e) {
        body = {{"error", e.code()}, {"message", e.what()}};
      }
      if (std::chrono::steady_clock::now() > deadline || !daemon_->alive()) {
        ADD_FAILURE() << target << " never got there: " << body.dump(2) << "\n"
                      << daemon_->log_tail(20000);
        return body;
      }
      if (std::chrono::steady_clock::now() > next_note) {  // progress, for a slow GPU host
        std::printf("%s: %s\n", target.c_str(), body.dump().substr(0, 400).c_str());
        std::fflush(stdout);
        next_note += 15s;
      }
      std::this_thread::sleep_for(250ms);
    }
  }

  int status_of(const std::string& target) {
    try {
      client_->call(http::verb::get, target);
      return 200;
    } catch (const ClientError& e) {
      return e.status();
    }
  }

  test::TempDir dir_;
  std::unique_ptr<harness::DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

TEST_F(PredictedCheckOnGpu, APredictedConfigIsCheckedOnTheGpuAndTheShapeStaysUntuned) {
  const std::string shape = "family=gemm&dtype=bf16&M=333&N=4096&K=4096";
  const std::string ask = "/v1/best?" + shape + "&predict=1";
  // The predictor is fitted in the background after start; then the check runs.
  const nlohmann::json answer = poll(
      ask,
      [](const nlohmann::json& b) {
        if (b.value("source", "") != "predicted" || !b["check"].is_object()) return false;
        const std::string status = b["check"].value("status", "");
        return status != "queued" && status != "running";
      },
      150s);
  ASSERT_EQ(answer.value("source", ""), "predicted") << answer.dump(2);
  const nlohmann::json& check = answer["check"];
  EXPECT_EQ(check["kind"], "gpu") << check;
  ASSERT_EQ(check["status"], "checked") << check.dump(2) << "\n" << daemon_->log_tail();
  EXPECT_EQ(check["device_model"], device_.name);
  EXPECT_GT(check["measured_us"].get<double>(), 0);
  EXPECT_LT(check["max_rel_error"].get<double>(), 0.05);
  EXPECT_GT(check["registers"].get<int>(), 0) << "the resource report of the compiled kernel";
  std::printf("predicted %s: expected %.1f us (%.1f-%.1f), measured %.1f us in its check\n",
              answer["template"].get<std::string>().c_str(), answer["expected_us"].get<double>(),
              answer["expected_interval_us"][0].get<double>(),
              answer["expected_interval_us"][1].get<double>(), check["measured_us"].get<double>());

  const nlohmann::json job = client_->job(check["job_id"].get<std::int64_t>());
  EXPECT_EQ(job["mode"], "check");
  EXPECT_EQ(job["status"], "done");
  EXPECT_TRUE(job["comparison"].is_null()) << "a check runs no final comparison";
  // No answer rests on a check: the shape is still untuned, and asking again predicts again.
  EXPECT_EQ(status_of("/v1/best?" + shape), 404);
  EXPECT_EQ(client_->call(http::verb::get, ask)["check"]["job_id"], check["job_id"]);
}

}  // namespace
}  // namespace kt
