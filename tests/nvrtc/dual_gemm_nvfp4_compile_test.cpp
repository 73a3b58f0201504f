// The NVFP4 grouped dual GEMM with SiLU (kernel_templates/dual_gemm_silu_nvfp4, Blackwell only,
// not validated on hardware): the manifest loads with per-group packed operands and scale atoms,
// refuses K the kernel cannot take, keeps only what fits TMEM (two 128-column accumulators and the
// scale columns) and shared memory, is never planned on Hopper, and a covering set of survivors
// compiles with NVRTC for sm_100a without spills, reporting registers and TMEM columns; the
// reference kernel compiles.
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "tcgen05_nvfp4_tma_ws";

const Family& dual_family() {
  return test::shipped_family("dual_gemm_silu_nvfp4");
}

DeviceLimits blackwell() {
  return test::limits_with_sms("sm_100a", 148);
}

Shape shape(std::int64_t g, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"G", g}, {"M", m}, {"N", n}, {"K", k}};
}

std::vector<VariantPlan> survivors(const Shape& s) {
  return test::survivors(dual_family(), kTemplate, s, "nvfp4", blackwell());
}

TEST(DualGemmNvfp4, ManifestHoldsGroupsOfPackedOperandsAndScales) {
  const Family& family = dual_family();
  EXPECT_EQ(family.dtypes, std::vector<std::string>{"nvfp4"});
  const TemplateSpec& tmpl = test::template_named(family, kTemplate);
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_100a"});
  EXPECT_TRUE(family.manifest.at("templates").at(0).at("validated_on").empty());
  EXPECT_FALSE(has_speedup_baseline(family));
  const Shape s = shape(3, 200, 136, 2048);
  const ProblemInstance problem =
      instantiate(family, tmpl, survivors(s).front().config, s, "nvfp4", blackwell());
  std::map<std::string, std::int64_t> elements;
  for (const BufferInstance& b : problem.buffers) elements[b.name] = b.elements;
  EXPECT_EQ(elements["A"], 3 * 200 * 2048 / 2);
  EXPECT_EQ(elements["B2"], 3 * 136 * 2048 / 2);
  EXPECT_EQ(elements["SFA"], 3 * 2 * 32 * 512) << "G x cdiv(M,128) x cdiv(K,64) atoms";
  EXPECT_EQ(elements["SFB1"], 3 * 2 * 32 * 512);
  EXPECT_EQ(elements["C"], 3 * 200 * 136);
  int scale_maps = 0;
  for (const ArgInstance& arg : problem.args)
    if (arg.kind == ArgInstance::Kind::tensor_map && arg.buffer.rfind("SF", 0) == 0) {
      ++scale_maps;
      EXPECT_EQ(arg.dims[0] * arg.dims[1] * arg.dims[2], elements[arg.buffer]) << arg.buffer;
    }
  EXPECT_EQ(scale_maps, 3);
  EXPECT_TRUE(validate_shape(family, shape(2, 64, 64, 48), "nvfp4").has_value()) << "K % 32";
  EXPECT_FALSE(validate_shape(family, shape(2, 64, 64, 96), "nvfp4").has_value());
}

TEST(DualGemmNvfp4, SpaceFitsTensorMemoryAndSharedMemory) {
  for (const Shape& s :
       {shape(8, 512, 2048, 4096), shape(1, 67, 45, 224), shape(4, 256, 1024, 131072)}) {
    const auto plans = survivors(s);
    ASSERT_FALSE(plans.empty()) << canonical_key(s);
    for (const VariantPlan& plan : plans) {
      const std::int64_t bk = plan.config.at("BK");
      EXPECT_LE(2 * 128 + bk / 16 * 3, plan.config.at("TMEM_COLS"));
      const LaunchDims launch =
          evaluate_launch(dual_family(), test::template_named(dual_family(), kTemplate),
                          plan.config, s, "nvfp4", blackwell());
      EXPECT_LE(launch.dynamic_smem, static_cast<std::uint32_t>(blackwell().smem_optin));
      if (s.at("M") <= 128) EXPECT_EQ(plan.config.at("CTA_GROUP"), 1);
      if (s.at("G") == 1) EXPECT_EQ(plan.config.at("GROUP_ORDER"), 0);
    }
  }
  for (const VariantPlan& plan : enumerate_variants(dual_family(), shape(8, 512, 2048, 4096),
                                                    "nvfp4", test::limits_with_sms("sm_90a", 132)))
    EXPECT_TRUE(plan.unsupported_arch);
}

TEST(DualGemmNvfp4, CoveringSetCompilesForSm100aWithResources) {
  const TemplateSpec& tmpl = test::template_named(dual_family(), kTemplate);
  std::vector<VariantPlan> pool;
  for (const Shape& s : {shape(8, 512, 2048, 4096), shape(2, 2048, 2048, 8192)})
    for (VariantPlan& plan : survivors(s)) pool.push_back(std::move(plan));
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 10u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (const VariantPlan& plan : chosen) {
    const std::string what = canonical_key(plan.config);
    const CompileResult result =
        test::compile_variant(dual_family(), tmpl, plan.config, "nvfp4", blackwell());
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
    const auto resources = template_resources(dual_family(), tmpl, plan.config,
                                              shape(8, 512, 2048, 4096), "nvfp4", blackwell());
    EXPECT_EQ(resources.at("tmem_columns"), 512);
    std::cout << "[ resources ] " << what << ": " << result.resources.registers
              << " registers, TMEM " << resources.at("tmem_columns") << " columns\n";
    for (const auto& [name, value] : plan.config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(DualGemmNvfp4, ReferenceCompiles) {
  const CompileResult result =
      compile_kernel(reference_compile_request(dual_family(), "nvfp4", blackwell()));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_GT(result.resources.registers, 0);
}

}  // namespace
}  // namespace kt
