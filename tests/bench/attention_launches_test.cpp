// The SDPA script's argument file, evaluated from the shipped attention_fwd manifest, and read
// back by the script itself (--check-only): the C++ side and the Python side agree on the format.
#include "bench/attention_launches.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include "bench/output_files.hpp"
#include "support/shipped_family.hpp"
#include "support/test_paths.hpp"

namespace kt::bench {
namespace {

DeviceLimits hopper() {
  DeviceLimits limits = *limits_for_arch("sm_90a");
  limits.sm_count = 132;
  return limits;
}

std::vector<LaunchCandidate> candidates() {
  LaunchCandidate wgmma;
  wgmma.variant_id = 12;
  wgmma.config = {{"template", "wgmma_flash3"},
                  {"HEAD_DIM", 128},
                  {"IS_CAUSAL", 1},
                  {"BLOCK_M", 128},
                  {"BLOCK_N", 128},
                  {"STAGES", 2},
                  {"CONSUMERS", 2},
                  {"PINGPONG", 1},
                  {"TILE_ORDER", 1}};
  wgmma.cubin = "/tmp/variant-12.cubin";
  LaunchCandidate mma;
  mma.variant_id = 13;
  mma.config = {{"template", "mma_flash2"},
                {"HEAD_DIM", 128},
                {"IS_CAUSAL", 1},
                {"BLOCK_M", 64},
                {"BLOCK_N", 64},
                {"WARPS", 4},
                {"STAGES", 2},
                {"TILE_ORDER", 0}};
  mma.cubin = "/tmp/variant-13.cubin";
  return {wgmma, mma};
}

TEST(AttentionLaunches, EvaluatesArgsAndLaunchFromTheManifest) {
  const Family& family = test::shipped_family("attention_fwd");
  const AttentionShape shape{4, 16, 4000, 128, true};
  const nlohmann::json entry =
      attention_launch_entry(family, shape, "bf16", hopper(), candidates());
  EXPECT_EQ(entry.at("key"), "4x16x4000x128c");
  EXPECT_EQ(entry.at("S"), 4000);
  EXPECT_EQ(entry.at("causal"), true);
  // atol + c * u(bf16, 1) * max m, m = sum_j p_ij |V_jd| <= 1 for inputs in [-1, 1].
  EXPECT_EQ(entry.at("tolerance").at("atol"), 0x1p-9 + 4 * (0x1p-8 + 0x1p-24));
  ASSERT_EQ(entry.at("candidates").size(), 2u);

  const nlohmann::json& wgmma = entry.at("candidates")[0];
  EXPECT_EQ(wgmma.at("kernel"), "kt_attention_wgmma");
  EXPECT_EQ(wgmma.at("cubin"), "/tmp/variant-12.cubin");
  const nlohmann::json& args = wgmma.at("args");
  ASSERT_EQ(args.size(), 7u);
  EXPECT_EQ(args[0], (nlohmann::json{{"kind", "buffer"}, {"buffer", "O"}}));
  EXPECT_EQ(args[2].at("kind"), "tensor_map");
  EXPECT_EQ(args[2].at("dims"), (nlohmann::json{128, 4000, 64}));  // D, S, B*H
  EXPECT_EQ(args[2].at("box"), (nlohmann::json{64, 128, 1}));
  EXPECT_EQ(args[2].at("swizzle"), 128);
  EXPECT_EQ(args[5], (nlohmann::json{{"kind", "i32"}, {"value", 4000.0}}));
  EXPECT_NEAR(args[6].at("value").get<double>(), 1.0 / std::sqrt(128.0), 1e-12);
  const nlohmann::json& launch = wgmma.at("launch");
  EXPECT_EQ(launch.at("grid"), (nlohmann::json{32, 64, 1}));  // cdiv(4000, 128), B*H
  EXPECT_EQ(launch.at("block"), (nlohmann::json{384, 1, 1}));
  EXPECT_EQ(launch.at("dynamic_smem"), 128 * 128 * 2 + 2 * 2 * 128 * 128 * 2 + 1280);

  const nlohmann::json& mma = entry.at("candidates")[1];
  EXPECT_EQ(mma.at("args")[2], (nlohmann::json{{"kind", "buffer"}, {"buffer", "Q"}}));
  EXPECT_EQ(mma.at("launch").at("grid"), (nlohmann::json{63, 64, 1}));
  EXPECT_EQ(mma.at("buffers").size(), 5u);

  LaunchCandidate unknown;
  unknown.config = {{"template", "no_such_template"}};
  EXPECT_THROW(attention_launch_entry(family, shape, "bf16", hopper(), {unknown}),
               std::invalid_argument);
}

TEST(AttentionLaunches, TheSdpaScriptAcceptsTheFile) {
  const Family& family = test::shipped_family("attention_fwd");
  test::TempDir dir;
  const auto path = dir.path() / "launches.json";
  write_text_file(path, sdpa_launch_file("NVIDIA H100",
                                         {attention_launch_entry(family, {1, 1, 67, 128, true},
                                                                 "fp16", hopper(), candidates())})
                            .dump());
  const std::string command = "python3 " +
                              (test::source_dir() / "bench" / "sdpa_baseline.py").string() +
                              " --launches " + path.string() + " --check-only 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_NE(output.find("ok: 1 shape(s), 2 candidate(s)"), std::string::npos) << output;
}

}  // namespace
}  // namespace kt::bench
