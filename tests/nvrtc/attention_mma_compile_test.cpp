// The FlashAttention-2 style template (kernel_templates/attention_fwd/attention_mma.cuh,
// "mma_flash2"): a covering set of its survivors for the shapes (every value of every
// axis at least once, both dtypes, both head dims, causal and not) compiles with NVRTC for sm_90a
// without spills, and a sample compiles for sm_100a and sm_80 too (the archs it is written for).
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "mma_flash2";

const Family& attention_family() {
  return test::shipped_family("attention_fwd");
}

const TemplateSpec& flash2() {
  for (const TemplateSpec& tmpl : attention_family().templates)
    if (tmpl.name == kTemplate) return tmpl;
  throw std::runtime_error(std::string("no template ") + kTemplate);
}

std::vector<VariantPlan> survivors(const std::string& arch) {
  const DeviceLimits limits = limits_for_arch(arch).value();
  std::vector<VariantPlan> out;
  for (const Shape& shape :
       std::vector<Shape>{{{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}, {"CAUSAL", 0}},
                          {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}, {"CAUSAL", 1}},
                          {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 64}, {"CAUSAL", 1}},
                          {{"B", 1}, {"H", 1}, {"S", 128}, {"D", 64}, {"CAUSAL", 0}}})
    for (VariantPlan& plan : enumerate_variants(attention_family(), shape, "bf16", limits))
      if (plan.tmpl != nullptr && plan.tmpl->name == kTemplate && !plan.pruned_by &&
          !plan.unsupported_arch)
        out.push_back(std::move(plan));
  return out;
}

CompileResult compile_for(const Config& config, const std::string& dtype, const std::string& arch) {
  return compile_kernel(
      compile_request(attention_family(), flash2(), config, dtype, limits_for_arch(arch).value()));
}

void expect_clean(const CompileResult& result, const std::string& at) {
  ASSERT_TRUE(result.ok) << at << "\n" << result.log;
  EXPECT_FALSE(result.cubin.empty());
  EXPECT_GT(result.resources.registers, 0) << result.log;
  EXPECT_EQ(result.resources.spill_store_bytes, 0) << at << "\n" << result.log;
  EXPECT_EQ(result.resources.spill_load_bytes, 0) << at << "\n" << result.log;
  EXPECT_EQ(result.resources.stack_frame_bytes, 0) << at << "\n" << result.log;
  EXPECT_EQ(result.resources.static_smem_bytes, 0) << "all shared memory is dynamic";
}

TEST(AttentionMma, CoveringSetCompilesForSm90aWithoutSpills) {
  const auto chosen = test::covering_set(survivors("sm_90a"));
  ASSERT_GE(chosen.size(), 3u);
  ASSERT_LE(chosen.size(), 10u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Config& config = chosen[i].config;
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";
    expect_clean(compile_for(config, dtype, "sm_90a"), canonical_key(config) + " " + dtype);
    for (const auto& [name, value] : config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : flash2().axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(AttentionMma, CompilesForBlackwellAndAmpere) {
  for (const std::string arch : {"sm_100a", "sm_80"}) {
    const auto plans = survivors(arch);
    ASSERT_FALSE(plans.empty()) << arch;
    // The largest-footprint survivor of each head dim: the one most likely to spill.
    std::map<std::int64_t, Config> largest;
    for (const VariantPlan& plan : plans) {
      const std::int64_t d = plan.config.at("HEAD_DIM");
      const auto weight = [](const Config& c) {
        return c.at("BLOCK_M") / c.at("WARPS") * (c.at("HEAD_DIM") + c.at("BLOCK_N"));
      };
      if (!largest.count(d) || weight(plan.config) > weight(largest[d])) largest[d] = plan.config;
    }
    ASSERT_EQ(largest.size(), 2u) << arch;
    for (const auto& [d, config] : largest)
      expect_clean(compile_for(config, d == 64 ? "fp16" : "bf16", arch),
                   canonical_key(config) + " " + arch);
  }
}

}  // namespace
}  // namespace kt
