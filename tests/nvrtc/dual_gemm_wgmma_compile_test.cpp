// The Hopper dual-GEMM template (kernel_templates/dual_gemm_silu/dual_gemm_wgmma.cuh): a covering
// set of its survivors for the large and small-M shapes (every value of every axis at least
// once, both dtypes) compiles with NVRTC for sm_90a without spills, with setmaxnreg honoured and
// the wgmma pipeline not serialised; a variant whose accumulators cannot fit fails with the
// static_assert's reason.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/family.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "wgmma_tma_ws";

const Family& dual_family() {
  return test::shipped_family("dual_gemm_silu");
}

TEST(DualGemmWgmma, CoveringSetCompilesForSm90aWithoutSpills) {
  const DeviceLimits limits = test::limits_with_sms("sm_90a", 132);
  const TemplateSpec& tmpl = test::template_named(dual_family(), kTemplate);
  // The large shape has clusters and both tile heights, the small-M ones split K.
  std::vector<VariantPlan> pool;
  for (const Shape& s : {Shape{{"G", 8}, {"M", 256}, {"N", 4096}, {"K", 7168}},
                         Shape{{"G", 2}, {"M", 192}, {"N", 3072}, {"K", 4096}},
                         Shape{{"G", 2}, {"M", 128}, {"N", 4096}, {"K", 1536}}})
    for (VariantPlan& plan : test::survivors(dual_family(), kTemplate, s, "bf16", limits))
      pool.push_back(std::move(plan));
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 16u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const VariantPlan& plan = chosen[i];
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";
    const std::string what = canonical_key(plan.config) + " " + dtype;
    const CompileResult result =
        test::compile_variant(dual_family(), tmpl, plan.config, dtype, limits);
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_LE(result.resources.registers * (plan.config.at("CONSUMERS") + 1) * 128,
              limits.regs_per_block)
        << what;
    test::expect_clean_wgmma_compile(result, what);
    for (const auto& [name, value] : plan.config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(DualGemmWgmma, AccumulatorsThatCannotFitAreAStaticAssert) {
  const DeviceLimits limits = test::limits_with_sms("sm_90a", 132);
  const TemplateSpec& tmpl = test::template_named(dual_family(), kTemplate);
  VariantPlan plan =
      test::survivors(dual_family(), kTemplate, {{"G", 8}, {"M", 256}, {"N", 4096}, {"K", 7168}},
                      "bf16", limits)
          .front();
  plan.config["BM"] = 128;
  plan.config["BN"] = 256;
  plan.config["CONSUMERS"] = 2;  // 2 x 128 accumulators per thread
  const CompileResult result =
      test::compile_variant(dual_family(), tmpl, plan.config, "bf16", limits);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("<= 128 fp32 accumulators"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
