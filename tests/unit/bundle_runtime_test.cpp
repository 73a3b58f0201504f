// client/runtime/kerntune_bundle.hpp without a GPU: a bundle read as `kerntune export --bundle`
// writes it, each refusal with its reason, the launch description turned into tensor-map
// arguments and scalars, and a load on a host without a driver refused with the reason.
#include "client/runtime/kerntune_bundle.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_paths.hpp"

namespace {

namespace fs = std::filesystem;

// What /v1/best's "launch" says for a wgmma_tma_ws dual GEMM variant (tensor maps over A, B1).
nlohmann::json launch_description() {
  return nlohmann::json::parse(R"json({
    "variant_id": 7, "kernel": "kt_dual_gemm_wgmma", "arch": "sm_90a",
    "grid": [132, 1, 1], "block": [384, 1, 1], "cluster": [2, 1, 1], "dynamic_smem_bytes": 198656,
    "params": [{"type": "pointer", "buffer": "C"},
               {"type": "tensor_map", "buffer": "A", "dims": [4096, 77, 1], "box": [64, 64, 1], "swizzle_bytes": 128},
               {"type": "tensor_map", "buffer": "B1", "dims": [4096, 14336, 1], "box": [64, 128, 1], "swizzle_bytes": 64},
               {"type": "i32", "expression": "M", "value": 77},
               {"type": "f32", "expression": "1/sqrt(D)", "value": 0.125},
               {"type": "pointer", "buffer": "workspace"}],
    "buffers": [{"name": "A", "role": "input", "dtype": "bf16", "elements": 315392},
                {"name": "B1", "role": "input", "dtype": "bf16", "elements": 58720256},
                {"name": "C", "role": "output", "dtype": "bf16", "elements": 1103872},
                {"name": "workspace", "role": "scratch", "dtype": "f32", "elements": 1}]
})json");
}

nlohmann::json entry(const std::string& device, std::int64_t m, const std::string& route,
                     int driver) {
  nlohmann::json answer{
      {"variant_id", route == "ours" ? nlohmann::json(7) : nlohmann::json(nullptr)},
      {"job_id", 3},
      {"baseline", "unfused_dual_gemm_silu"},
      {"baseline_wins", route != "ours"},
      {"stale", false},
      {"keys", {{"driver_version", driver}, {"gpu_model", device}}},
      {"launch", launch_description()}};
  return {{"family", "dual_gemm_silu"},
          {"shape", {{"G", 1}, {"M", m}, {"N", 14336}, {"K", 4096}}},
          {"dtype", "bf16"},
          {"device", device},
          {"route", route},
          {"kernel", "kernels/variant-7.cubin"},
          {"answer", answer}};
}

class BundleRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    write({{"format", "kerntune-bundle/1"},
           {"entries",
            {entry("NVIDIA H200", 77, "ours", 13000), entry("NVIDIA H200", 1, "baseline", 13000),
             entry("NVIDIA H100 80GB HBM3", 16, "ours", 13000)}}});
  }
  void write(const nlohmann::json& index) {
    fs::create_directories(dir.path() / "kernels");
    std::ofstream(dir.path() / "bundle.json") << index.dump();
    std::ofstream(dir.path() / "kernels" / "variant-7.cubin") << "not a cubin";
  }
  std::map<std::string, std::int64_t> shape(std::int64_t m) const {
    return {{"G", 1}, {"M", m}, {"N", 14336}, {"K", 4096}};
  }
  kt::test::TempDir dir;
};

TEST_F(BundleRuntime, FindsTheEntryAndSaysWhyWhereItRefuses) {
  const kerntune::Bundle bundle = kerntune::Bundle::open(dir.path().string());
  ASSERT_EQ(bundle.entries().size(), 3u);
  const kerntune::Lookup ok =
      bundle.find("dual_gemm_silu", shape(77), "bf16", "NVIDIA H200", 13000);
  ASSERT_NE(ok.entry, nullptr) << ok.refused;
  EXPECT_EQ(ok.entry->kernel_path, "kernels/variant-7.cubin");

  EXPECT_EQ(bundle.find("dual_gemm_silu", shape(77), "bf16", "NVIDIA H200", 12080).refused,
            "tuned under driver 13000, this one is 12080");
  EXPECT_EQ(bundle.find("dual_gemm_silu", shape(1), "bf16", "NVIDIA H200", 13000).refused,
            "unfused_dual_gemm_silu won this shape");
  // Our best variant rides along where the baseline won: a program may ask for it.
  EXPECT_NE(bundle.find("dual_gemm_silu", shape(1), "bf16", "NVIDIA H200", 13000, true).entry,
            nullptr);
  EXPECT_EQ(bundle.find("dual_gemm_silu", shape(16), "bf16", "NVIDIA H200", 13000).refused,
            "tuned on NVIDIA H100 80GB HBM3, this GPU is NVIDIA H200");
  const kerntune::Lookup missing =
      bundle.find("dual_gemm_silu", shape(3), "fp16", "NVIDIA H200", 13000);
  EXPECT_EQ(missing.entry, nullptr);
  EXPECT_EQ(missing.refused, "dual_gemm_silu G=1,K=4096,M=3,N=14336 fp16 is not in the bundle");
}

TEST_F(BundleRuntime, ALaunchDescriptionBecomesTensorMapsAndScalars) {
  const kerntune::LaunchPlan plan = kerntune::launch_plan(launch_description());
  EXPECT_EQ(plan.entry, "kt_dual_gemm_wgmma");
  EXPECT_EQ(plan.grid[0], 132u);
  EXPECT_EQ(plan.cluster[0], 2u);
  EXPECT_EQ(plan.dynamic_smem, 198656u);
  ASSERT_EQ(plan.params.size(), 6u);
  const kerntune::TensorMapArgs& a = plan.params[1].map;
  EXPECT_EQ(a.dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.dims, (std::vector<cuuint64_t>{4096, 77, 1}));
  // Dense row-major: a row is 4096 bf16 = 8192 bytes, a group 77 rows.
  EXPECT_EQ(a.strides, (std::vector<cuuint64_t>{8192, 8192 * 77}));
  EXPECT_EQ(a.box, (std::vector<cuuint32_t>{64, 64, 1}));
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(plan.params[2].map.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
  EXPECT_EQ(plan.params[3].kind, "i32");
  EXPECT_EQ(plan.params[3].value, 77);
  EXPECT_FLOAT_EQ(static_cast<float>(plan.params[4].value), 0.125f);
  ASSERT_EQ(plan.buffers.size(), 4u);
  EXPECT_EQ(plan.buffers[3].role, "scratch");
  EXPECT_EQ(plan.buffers[1].bytes(), 58720256u * 2);

  nlohmann::json bad = launch_description();
  bad["params"][1]["swizzle_bytes"] = 16;
  EXPECT_THROW(kerntune::launch_plan(bad), kerntune::BundleError);
  bad = launch_description();
  bad["params"][1]["box"] = {64, 64};
  EXPECT_THROW(kerntune::launch_plan(bad), kerntune::BundleError);
  bad = launch_description();
  bad["params"][3]["type"] = "f16";
  EXPECT_THROW(kerntune::launch_plan(bad), kerntune::BundleError);
}

TEST_F(BundleRuntime, AFolderThatIsNoBundleIsRefused) {
  write({{"format", "something/9"}});
  try {
    kerntune::Bundle::open(dir.path().string());
    FAIL() << "opened a folder of another format";
  } catch (const kerntune::BundleError& error) {
    EXPECT_NE(std::string(error.what()).find("format 'something/9'"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(kerntune::Bundle::open((dir.path() / "missing").string()), kerntune::BundleError);
}

TEST_F(BundleRuntime, ACubinThatDoesNotMatchItsRecordedHashIsNotLoaded) {
  EXPECT_EQ(kerntune::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2
  nlohmann::json tampered = entry("NVIDIA H200", 77, "ours", 13000);
  tampered["kernel_sha256"] = kerntune::sha256_hex("the cubin as exported");
  write({{"format", "kerntune-bundle/1"}, {"entries", {tampered}}});
  const kerntune::Bundle bundle = kerntune::Bundle::open(dir.path().string());
  const kerntune::Lookup found =
      bundle.find("dual_gemm_silu", shape(77), "bf16", "NVIDIA H200", 13000);
  ASSERT_NE(found.entry, nullptr);
  EXPECT_EQ(found.entry->kernel_sha256, tampered["kernel_sha256"]);
  try {
    kerntune::Kernel::load(bundle, *found.entry, 0);  // checked before any driver call
    FAIL() << "loaded a cubin whose hash does not match";
  } catch (const kerntune::BundleError& error) {
    EXPECT_NE(std::string(error.what()).find("does not match the SHA-256"), std::string::npos)
        << error.what();
  }
}

TEST_F(BundleRuntime, LoadingWithoutADriverSaysSo) {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) || fs::exists("/dev/nvidiactl"))
    GTEST_SKIP() << "this host has an NVIDIA driver (tests/gpu loads and launches bundles)";
  const kerntune::Bundle bundle = kerntune::Bundle::open(dir.path().string());
  const kerntune::Lookup ok =
      bundle.find("dual_gemm_silu", shape(77), "bf16", "NVIDIA H200", 13000);
  ASSERT_NE(ok.entry, nullptr);
  try {
    kerntune::Kernel::load(bundle, *ok.entry, 0);
    FAIL() << "loaded a kernel without a driver";
  } catch (const kerntune::BundleError& error) {
    EXPECT_NE(std::string(error.what()).find("no NVIDIA driver on this host"), std::string::npos)
        << error.what();
  }
}

}  // namespace
