// A kernel a client can launch: after a compile-mode job with a pinned config on a real daemon,
// GET /v1/variants/{id}/launch and the kernel download's headers carry the entry point, the arch
// and the launch dims the gemm manifest's formulas give for the job's shape (worked out by hand
// here), and the kernel's parameters in the manifest's order.
#include <gtest/gtest.h>

#include <thread>

#include "client/http_transport.hpp"
#include "support/in_process_daemon.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

std::string header(const HttpReply& reply, const std::string& name) {
  for (const auto& [key, value] : reply.headers)
    if (key == name) return value;
  return "";
}

TEST(VariantLaunch, DescribesTheLaunchOfACompiledVariant) {
  test::InProcessDaemon daemon;
  const HttpTransport transport(parse_server_url(daemon.url), 60s, "");
  // M=96, N=80 with 64x64 tiles and clusters of 2 along M: grid cdiv(80,64) x
  // cdiv(cdiv(96,64),2)*2 x SPLIT_K = 2x2x1, cluster [CLUSTER_N, CLUSTER_M, 1] = 1x2x1; block
  // WARPS_M*WARPS_N*32 = 128; dynamic smem STAGES*(BM+BN)*BK*2 bytes = 2*128*32*2 = 16384.
  const HttpReply created = transport.send(http::verb::post, "/v1/jobs", R"({
      "family":"gemm","shape":{"M":96,"N":80,"K":40},"dtype":"bf16","mode":"compile",
      "arch":"sm_90a","configs":[{"template":"mma_multistage_cluster","BM":64,"BN":64,
      "BK":32,"WARPS_M":2,"WARPS_N":2,"STAGES":2,"K_ORDER":0,"SPLIT_K":1,"CLUSTER_M":2,
      "CLUSTER_N":1}]})");
  ASSERT_EQ(created.status, 202) << created.body;
  const std::string job_id = nlohmann::json::parse(created.body)["id"].dump();
  nlohmann::json page;
  for (int i = 0; i < 1200; ++i) {
    page = nlohmann::json::parse(
        transport.send(http::verb::get, "/v1/jobs/" + job_id + "/variants").body);
    if (page["status"] == "done" || page["status"] == "failed") break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(page["status"], "done") << page.dump();
  ASSERT_EQ(page["variants"].size(), 1u) << page.dump();
  const nlohmann::json& variant = page["variants"][0];
  ASSERT_EQ(variant["has_kernel"], true) << variant.dump();
  const std::string id = variant["id"].dump();

  const HttpReply reply = transport.send(http::verb::get, "/v1/variants/" + id + "/launch");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto launch = nlohmann::json::parse(reply.body);
  EXPECT_EQ(launch["kernel"], "kt_gemm_mma");
  EXPECT_EQ(launch["arch"], "sm_90a");
  EXPECT_EQ(launch["grid"], nlohmann::json({2, 2, 1}));
  EXPECT_EQ(launch["block"], nlohmann::json({128, 1, 1}));
  EXPECT_EQ(launch["cluster"], nlohmann::json({1, 2, 1}));
  EXPECT_EQ(launch["dynamic_smem_bytes"], 16384);
  // The manifest's args: C, A, B, M, N, K, workspace, semaphores.
  const auto& params = launch["params"];
  ASSERT_EQ(params.size(), 8u) << params.dump();
  EXPECT_EQ(params[0], nlohmann::json({{"type", "pointer"}, {"buffer", "C"}}));
  EXPECT_EQ(params[1]["buffer"], "A");
  EXPECT_EQ(params[3], nlohmann::json({{"type", "i32"}, {"expression", "M"}, {"value", 96}}));
  EXPECT_EQ(params[4]["value"], 80);
  EXPECT_EQ(params[5]["value"], 40);
  EXPECT_EQ(params[7]["buffer"], "semaphores");
  bool has_a = false;
  for (const auto& buffer : launch["buffers"])
    if (buffer["name"] == "A") {
      has_a = true;
      EXPECT_EQ(buffer["elements"], 96 * 40);
      EXPECT_EQ(buffer["role"], "input");
    }
  EXPECT_TRUE(has_a) << launch["buffers"].dump();

  // The cubin's download says the same in its headers.
  const HttpReply kernel = transport.send(http::verb::get, "/v1/variants/" + id + "/kernel");
  ASSERT_EQ(kernel.status, 200);
  EXPECT_EQ(header(kernel, "X-Kernel-Name"), "kt_gemm_mma");
  EXPECT_EQ(header(kernel, "X-Kernel-Grid"), "2,2,1");
  EXPECT_EQ(header(kernel, "X-Kernel-Block"), "128,1,1");
  EXPECT_EQ(header(kernel, "X-Kernel-Cluster"), "1,2,1");
  EXPECT_EQ(header(kernel, "X-Kernel-Dynamic-Smem"), "16384");
  EXPECT_EQ(header(kernel, "X-Kernel-Launch"), "/v1/variants/" + id + "/launch");

  // Unknown variant: 404 with the standard error body.
  const HttpReply missing = transport.send(http::verb::get, "/v1/variants/999999/launch");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing.body)["error"]["code"], "unknown_variant");
}

}  // namespace
}  // namespace kt
