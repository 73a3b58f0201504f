// The Blackwell GEMM template (kernel_templates/gemm/gemm_tcgen05.cuh on the shared tcgen05 core,
// "tcgen05_tma_ws"): only for sm_100a (recorded as unsupported on Hopper), reports its
// tensor-memory columns, prunes by the hardware's TMEM, CTA-pair and cluster rules before
// compiling, and a covering set of its survivors (every surviving value of every axis, both dtypes)
// compiles with NVRTC for sm_100a without spills. No Blackwell GPU runs it here.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/variant_cover.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "tcgen05_tma_ws";
const Shape kSquare{{"M", 4096}, {"N", 4096}, {"K", 4096}};

using test::gemm_family;

bool power_of_two(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

TEST(GemmTcgen05, BlackwellOnlyAndReportsTmemColumns) {
  const TemplateSpec& tmpl = test::gemm_template(kTemplate);
  EXPECT_EQ(tmpl.kernel, "kt_gemm_tcgen05");
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_100a"});
  EXPECT_EQ(tmpl.resources.at("tmem_columns"), "TMEM_COLS");
  const DeviceLimits hopper = test::limits_with_sms("sm_90a", 132);
  int seen = 0;
  for (const VariantPlan& plan : enumerate_variants(gemm_family(), kSquare, "bf16", hopper))
    if (plan.tmpl->name == kTemplate) {
      ++seen;
      EXPECT_TRUE(plan.unsupported_arch) << "tcgen05 does not exist on sm_90a";
    }
  EXPECT_EQ(seen, 1) << "an unsupported template comes back once";
}

TEST(GemmTcgen05, SpaceHonoursTmemPairAndClusterRules) {
  const DeviceLimits limits = test::limits_with_sms("sm_100a", 148);
  const TemplateSpec& tmpl = test::gemm_template(kTemplate);
  const auto kept = test::survivors(gemm_family(), kTemplate, kSquare, "bf16", limits);
  EXPECT_GE(kept.size(), 50u);
  EXPECT_LE(kept.size(), 400u);
  std::set<std::int64_t> groups, columns;
  for (const VariantPlan& plan : kept) {
    const auto& c = plan.config;
    const std::string what = canonical_key(c);
    groups.insert(c.at("CTA_GROUP"));
    columns.insert(c.at("TMEM_COLS"));
    EXPECT_EQ(c.at("BM"), 128 * c.at("CTA_GROUP")) << what;
    EXPECT_LE(c.at("ACC_STAGES") * c.at("BN"), c.at("TMEM_COLS")) << what;
    EXPECT_LE(c.at("TMEM_COLS"), 512) << what;
    EXPECT_TRUE(power_of_two(c.at("TMEM_COLS"))) << what;
    EXPECT_TRUE(c.at("CTA_GROUP") == 1 || c.at("MULTICAST") == 1) << what;
    EXPECT_EQ(
        template_resources(gemm_family(), tmpl, c, kSquare, "bf16", limits).at("tmem_columns"),
        c.at("TMEM_COLS"));
    for (const Shape& s : {kSquare, smoke_shape_for(gemm_family(), kSquare)}) {
      const ProblemInstance problem = instantiate(gemm_family(), tmpl, c, s, "bf16", limits);
      EXPECT_EQ(problem.launch.cluster[0], c.at("CTA_GROUP") * c.at("MULTICAST")) << what;
      EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u) << what;
      EXPECT_EQ(problem.launch.block[0], 192u);
      EXPECT_LE(problem.launch.dynamic_smem, limits.smem_optin) << what;
      for (const ArgInstance& arg : problem.args)
        if (arg.kind == ArgInstance::Kind::tensor_map) {
          EXPECT_EQ(arg.box[0] * 2, 128u);
          EXPECT_EQ(arg.box[1] % 8, 0u) << "whole 8-row swizzle groups " << what;
        }
    }
  }
  EXPECT_EQ(groups, (std::set<std::int64_t>{1, 2})) << "1-CTA and CTA-pair MMAs";
  EXPECT_GE(columns.size(), 2u);
}

TEST(GemmTcgen05, CoveringSetCompilesForSm100aWithoutSpills) {
  const DeviceLimits limits = test::limits_with_sms("sm_100a", 148);
  const TemplateSpec& tmpl = test::gemm_template(kTemplate);
  // The square shape has CTA pairs and wide tiles; the small one, whose 128-column tiles would
  // leave SMs idle, has BN=64 and the smallest TMEM allocations.
  std::vector<VariantPlan> pool;
  std::map<std::string, std::set<std::int64_t>> surviving;
  for (const Shape& s : {kSquare, Shape{{"M", 256}, {"N", 2048}, {"K", 4096}}})
    for (VariantPlan& plan : test::survivors(gemm_family(), kTemplate, s, "bf16", limits)) {
      for (const auto& [name, value] : plan.config) surviving[name].insert(value);
      pool.push_back(std::move(plan));
    }
  EXPECT_EQ(surviving["TMEM_COLS"], (std::set<std::int64_t>{64, 128, 256, 512}))
      << "32 columns hold no tile of these BN values";
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 12u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";
    const std::string what = canonical_key(chosen[i].config) + " " + dtype;
    const CompileResult result =
        test::compile_variant(gemm_family(), tmpl, chosen[i].config, dtype, limits);
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.spill_load_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.stack_frame_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.static_smem_bytes, 0) << "all shared memory is dynamic";
    for (const auto& [name, value] : chosen[i].config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name], surviving[spec.name]) << "axis " << spec.name;
}

TEST(GemmTcgen05, TooFewTmemColumnsAreAStaticAssert) {
  const DeviceLimits limits = test::limits_with_sms("sm_100a", 148);
  const TemplateSpec& tmpl = test::gemm_template(kTemplate);
  VariantPlan plan = test::survivors(gemm_family(), kTemplate, kSquare, "bf16", limits).front();
  plan.config["BN"] = 256;
  plan.config["ACC_STAGES"] = 2;
  plan.config["TMEM_COLS"] = 256;
  const CompileResult result =
      test::compile_variant(gemm_family(), tmpl, plan.config, "bf16", limits);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("every accumulator fits the allocated columns"), std::string::npos)
      << result.log;
}

}  // namespace
}  // namespace kt
