// The Blackwell dual-GEMM template (kernel_templates/dual_gemm_silu/dual_gemm_tcgen05.cuh on the
// shared tcgen05 core): only for sm_100a, both accumulators (and both of each stage, when the
// epilogue overlaps the MMAs) fit the TMEM columns it allocates, CTA pairs come as clusters of 2
// along M, and a covering set of its survivors for the shapes compiles with NVRTC for
// sm_100a without spills. No Blackwell GPU runs it here.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "tcgen05_tma_ws";
const Shape kLarge{{"G", 8}, {"M", 256}, {"N", 4096}, {"K", 7168}};
const Shape kSmallM{{"G", 8}, {"M", 64}, {"N", 4096}, {"K", 7168}};

const Family& dual_family() {
  return test::shipped_family("dual_gemm_silu");
}

TEST(DualGemmTcgen05, UnsupportedOnHopper) {
  const DeviceLimits hopper = test::limits_with_sms("sm_90a", 132);
  for (const VariantPlan& plan : enumerate_variants(dual_family(), kLarge, "bf16", hopper))
    if (plan.tmpl->name == kTemplate) {
      EXPECT_TRUE(plan.unsupported_arch);
    }
}

TEST(DualGemmTcgen05, BothAccumulatorsOfEveryStageFitTheAllocatedColumns) {
  const DeviceLimits limits = test::limits_with_sms("sm_100a", 148);
  const TemplateSpec& tmpl = test::template_named(dual_family(), kTemplate);
  std::set<std::int64_t> groups;
  for (const Shape& s : {kLarge, kSmallM}) {
    const auto kept = test::survivors(dual_family(), kTemplate, s, "bf16", limits);
    EXPECT_GE(kept.size(), 10u);
    EXPECT_LE(kept.size(), 400u);
    for (const VariantPlan& plan : kept) {
      const auto& c = plan.config;
      const std::string what = canonical_key(c);
      groups.insert(c.at("CTA_GROUP"));
      EXPECT_LE(2 * c.at("ACC_STAGES") * c.at("BN"), c.at("TMEM_COLS")) << what;
      EXPECT_LE(c.at("TMEM_COLS"), 512) << what;
      EXPECT_TRUE(c.at("ACC_STAGES") == 1 || c.at("GRID") > 0) << "overlap needs persistence";
      if (s.at("M") <= 128) {
        EXPECT_EQ(c.at("CTA_GROUP"), 1) << "a 256-row pair for " << s.at("M") << " rows";
      }
      const ProblemInstance problem = instantiate(dual_family(), tmpl, c, s, "bf16", limits);
      EXPECT_EQ(problem.launch.cluster[0], c.at("CTA_GROUP") * c.at("MULTICAST")) << what;
      EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u) << what;
      EXPECT_EQ(template_resources(dual_family(), tmpl, c, s, "bf16", limits).at("tmem_columns"),
                c.at("TMEM_COLS"));
    }
  }
  EXPECT_EQ(groups, (std::set<std::int64_t>{1, 2}));
}

TEST(DualGemmTcgen05, CoveringSetCompilesForSm100aWithoutSpills) {
  const DeviceLimits limits = test::limits_with_sms("sm_100a", 148);
  const TemplateSpec& tmpl = test::template_named(dual_family(), kTemplate);
  std::vector<VariantPlan> pool;
  std::map<std::string, std::set<std::int64_t>> surviving;
  for (const Shape& s : {kLarge, kSmallM, Shape{{"G", 2}, {"M", 384}, {"N", 4096}, {"K", 1536}}})
    for (VariantPlan& plan : test::survivors(dual_family(), kTemplate, s, "bf16", limits)) {
      for (const auto& [name, value] : plan.config) surviving[name].insert(value);
      pool.push_back(std::move(plan));
    }
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 12u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";
    const std::string what = canonical_key(chosen[i].config) + " " + dtype;
    const CompileResult result =
        test::compile_variant(dual_family(), tmpl, chosen[i].config, dtype, limits);
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.spill_load_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.stack_frame_bytes, 0) << what << "\n" << result.log;
    for (const auto& [name, value] : chosen[i].config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name], surviving[spec.name]) << "axis " << spec.name;
  EXPECT_EQ(surviving["CTA_GROUP"], (std::set<std::int64_t>{1, 2}));
}

}  // namespace
}  // namespace kt
