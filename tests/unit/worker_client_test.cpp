// The daemon's side of the worker against the real kerntune-worker binary, on any machine: the
// paths tested here need no GPU (probe without a driver, malformed requests, and the fault
// handling, driven by the worker's test-only ops).
#include "engine/worker_client.hpp"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include <gtest/gtest.h>

#include "engine/child_process.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::filesystem::path worker_exe() {
  return test::binary_dir() / "kerntune-worker";
}

bool driver_present() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

// No child of this test process is left unreaped (each test runs in its own process).
void expect_no_children() {
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

class WorkerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(worker_exe())) << worker_exe();
    setenv("KT_WORKER_DEBUG_OPS", "1", 1);  // inherited by the workers started below
  }
};

TEST_F(WorkerClientTest, ProbeAnswersQuicklyAndSaysWhyThereIsNoDevice) {
  const auto begin = Clock::now();
  const ProbeResult probe = probe_devices(worker_exe(), 30s);
  EXPECT_LT(Clock::now() - begin, 20s);
  if (driver_present()) {
    EXPECT_TRUE(probe.driver_found) << probe.error;
    for (const DeviceInfo& device : probe.devices) {
      EXPECT_FALSE(device.name.empty());
      EXPECT_EQ(device.uuid.rfind("GPU-", 0), 0u) << device.uuid;
      EXPECT_EQ(device.arch, arch_for_compute_capability(device.sm_major, device.sm_minor));
    }
  } else {
    EXPECT_FALSE(probe.driver_found);
    EXPECT_TRUE(probe.devices.empty());
    EXPECT_NE(probe.error.find("libcuda.so.1 not found"), std::string::npos) << probe.error;
  }
  expect_no_children();
}

TEST_F(WorkerClientTest, ProbeOfAMissingWorkerReportsIt) {
  const ProbeResult probe = probe_devices("/nonexistent/kerntune-worker", 5s);
  EXPECT_FALSE(probe.driver_found);
  EXPECT_NE(probe.error.find("cannot start"), std::string::npos) << probe.error;
  expect_no_children();
}

TEST_F(WorkerClientTest, UnparseableLineGetsAnErrorAnswer) {
  ChildProcess worker(worker_exe(), {"--device", "0"});
  ASSERT_TRUE(worker.write_line("this is { not json"));
  std::string line;
  ASSERT_EQ(worker.read_line(line, Clock::now() + 20s), ChildProcess::ReadStatus::line);
  const auto answer = nlohmann::json::parse(line);
  EXPECT_FALSE(answer.at("ok").get<bool>());
  EXPECT_NE(answer.at("error").get<std::string>().find("malformed request"), std::string::npos);
  // Still serving: the next request is answered too.
  ASSERT_TRUE(worker.write_line(R"({"op":"shutdown"})"));
  ASSERT_EQ(worker.read_line(line, Clock::now() + 20s), ChildProcess::ReadStatus::line);
  EXPECT_EQ(nlohmann::json::parse(line).at("ok"), true);
  EXPECT_EQ(worker.wait(5s), "exited with status 0");
}

TEST_F(WorkerClientTest, BadRequestsAreAnsweredWithoutRestartingTheWorker) {
  WorkerClient client(worker_exe(), 0);
  WorkerReply reply = client.call(nlohmann::json("just a string"), 20s);
  ASSERT_EQ(reply.outcome, WorkerReply::Outcome::answered) << reply.reason;
  EXPECT_FALSE(reply.body.at("ok").get<bool>());
  EXPECT_NE(reply.body.at("error").get<std::string>().find("JSON object"), std::string::npos);

  reply = client.call({{"op", "no_such_op"}}, 20s);
  ASSERT_EQ(reply.outcome, WorkerReply::Outcome::answered);
  EXPECT_NE(reply.body.at("error").get<std::string>().find("unknown op"), std::string::npos);

  reply = client.call({{"op", "measure"}, {"variant_id", 1}}, 20s);
  ASSERT_EQ(reply.outcome, WorkerReply::Outcome::answered);
  EXPECT_NE(reply.body.at("error").get<std::string>().find("missing field"), std::string::npos);

  reply = client.call({{"op", "probe"}}, 20s);
  ASSERT_EQ(reply.outcome, WorkerReply::Outcome::answered);
  EXPECT_TRUE(reply.body.at("probe").contains("driver_found"));
  EXPECT_EQ(client.starts(), 1);
}

TEST_F(WorkerClientTest, WorkerKilledMidRequestIsCrashedAndRestarted) {
  WorkerClient client(worker_exe(), 0);
  WorkerReply reply = client.call({{"op", "debug_exit"}, {"signal", 9}}, 20s);
  EXPECT_EQ(reply.outcome, WorkerReply::Outcome::crashed);
  EXPECT_NE(reply.reason.find("killed by signal 9"), std::string::npos) << reply.reason;
  reply = client.call({{"op", "probe"}}, 20s);
  EXPECT_EQ(reply.outcome, WorkerReply::Outcome::answered) << reply.reason;
  EXPECT_EQ(client.starts(), 2);
}

TEST_F(WorkerClientTest, SilentWorkerIsAHangAndIsKilledInTime) {
  WorkerClient client(worker_exe(), 0);
  ASSERT_EQ(client.call({{"op", "probe"}}, 20s).outcome, WorkerReply::Outcome::answered);
  const auto begin = Clock::now();
  const WorkerReply reply = client.call({{"op", "debug_sleep"}, {"ms", 60000}}, 300ms);
  EXPECT_LT(Clock::now() - begin, 5s);
  EXPECT_EQ(reply.outcome, WorkerReply::Outcome::hang);
  EXPECT_NE(reply.reason.find("no answer within 300 ms"), std::string::npos) << reply.reason;
  EXPECT_EQ(client.call({{"op", "probe"}}, 20s).outcome, WorkerReply::Outcome::answered);
  EXPECT_EQ(client.starts(), 2);
}

TEST_F(WorkerClientTest, DeathAfterAStickyFaultNoticeIsIllegalAccess) {
  WorkerClient client(worker_exe(), 0);
  const WorkerReply reply =
      client.call({{"op", "debug_exit"}, {"notice", "illegal_access"}, {"status", 3}}, 20s);
  EXPECT_EQ(reply.outcome, WorkerReply::Outcome::illegal_access);
  EXPECT_NE(reply.reason.find("exited with status 3"), std::string::npos) << reply.reason;
}

TEST_F(WorkerClientTest, MissingWorkerBinaryIsReportedNotThrown) {
  WorkerClient client("/nonexistent/kerntune-worker", 0);
  const WorkerReply reply = client.call({{"op", "probe"}}, 5s);
  EXPECT_EQ(reply.outcome, WorkerReply::Outcome::crashed);
  EXPECT_NE(reply.reason.find("could not be started"), std::string::npos) << reply.reason;
  MeasureRequest request;
  request.variant_id = 5;
  const MeasureResult result = client.measure(request, 5s);
  EXPECT_EQ(result.status, VariantStatus::crashed);
  EXPECT_EQ(result.variant_id, 5);
}

TEST_F(WorkerClientTest, WithoutADeviceMeasureIsCrashedWithTheReason) {
  if (driver_present()) GTEST_SKIP() << "a driver is present; the GPU tests cover this host";
  WorkerClient client(worker_exe(), 0);
  MeasureRequest request;
  request.variant_id = 11;
  const MeasureResult result = client.measure(request, 20s);
  EXPECT_EQ(result.status, VariantStatus::crashed);
  EXPECT_EQ(result.variant_id, 11);
  EXPECT_NE(result.reason.find("libcuda.so.1"), std::string::npos) << result.reason;

  std::string reason;
  EXPECT_FALSE(client.time_baseline(BaselineTimingRequest{}, 20s, &reason).has_value());
  EXPECT_NE(reason.find("libcuda.so.1"), std::string::npos) << reason;
}

TEST_F(WorkerClientTest, WithoutADeviceInterleavedReMeasureThrowsWithTheReason) {
  if (driver_present()) GTEST_SKIP() << "a driver is present; the GPU tests cover this host";
  WorkerClient client(worker_exe(), 0);
  InterleavedRequest request;
  request.candidates.resize(2);
  try {
    client.measure_interleaved(request);
    FAIL() << "no device, yet an answer";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.outcome(), WorkerReply::Outcome::crashed);
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(client.measure_interleaved(InterleavedRequest{}), std::invalid_argument);
}

TEST_F(WorkerClientTest, MalformedInterleavedRequestIsRefusedByALiveWorker) {
  WorkerClient client(worker_exe(), 0);
  const WorkerReply reply = client.call({{"op", "measure_interleaved"}, {"candidates", 3}}, 20s);
  ASSERT_EQ(reply.outcome, WorkerReply::Outcome::answered) << reply.reason;
  EXPECT_FALSE(reply.body.value("ok", true));
  EXPECT_NE(reply.body.value("error", "").find("candidates"), std::string::npos) << reply.body;
  EXPECT_EQ(client.call({{"op", "probe"}}, 20s).outcome, WorkerReply::Outcome::answered);
  EXPECT_EQ(client.starts(), 1);
}

TEST_F(WorkerClientTest, StoppingLeavesNoZombies) {
  {
    WorkerClient client(worker_exe(), 0);
    EXPECT_EQ(client.call({{"op", "probe"}}, 20s).outcome, WorkerReply::Outcome::answered);
    EXPECT_EQ(client.call({{"op", "debug_exit"}, {"status", 1}}, 20s).outcome,
              WorkerReply::Outcome::crashed);
    EXPECT_EQ(client.call({{"op", "debug_sleep"}, {"ms", 10000}}, 100ms).outcome,
              WorkerReply::Outcome::hang);
    EXPECT_EQ(client.call({{"op", "probe"}}, 20s).outcome, WorkerReply::Outcome::answered);
  }  // the destructor shuts the last worker down
  expect_no_children();
}

}  // namespace
}  // namespace kt
