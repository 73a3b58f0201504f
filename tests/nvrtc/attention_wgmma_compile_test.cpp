// The FlashAttention-3 style Hopper template (kernel_templates/attention_fwd/attention_wgmma.cuh,
// "wgmma_flash3"): it exists only for sm_90a, takes 3-D tensor maps, and a covering set of its
// survivors for the shapes (every value of every axis at least once, both dtypes, both
// head dims, causal and not) compiles with NVRTC for sm_90a without spills, with setmaxnreg
// honoured and the wgmma pipeline not serialised. Its static_asserts name broken assumptions.
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

constexpr const char* kTemplate = "wgmma_flash3";

const Family& attention_family() {
  return test::shipped_family("attention_fwd");
}

const TemplateSpec& flash3() {
  for (const TemplateSpec& tmpl : attention_family().templates)
    if (tmpl.name == kTemplate) return tmpl;
  throw std::runtime_error(std::string("no template ") + kTemplate);
}

DeviceLimits hopper_limits() {
  DeviceLimits limits = limits_for_arch("sm_90a").value();
  limits.sm_count = 132;
  return limits;
}

// Survivors over the shapes: both head dims, causal and not.
std::vector<VariantPlan> survivors() {
  std::vector<VariantPlan> out;
  for (const Shape& shape :
       std::vector<Shape>{{{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}, {"CAUSAL", 0}},
                          {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}, {"CAUSAL", 1}},
                          {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 64}, {"CAUSAL", 1}},
                          {{"B", 1}, {"H", 8}, {"S", 512}, {"D", 64}, {"CAUSAL", 0}}})
    for (VariantPlan& plan : enumerate_variants(attention_family(), shape, "bf16", hopper_limits()))
      if (plan.tmpl != nullptr && plan.tmpl->name == kTemplate && !plan.pruned_by &&
          !plan.unsupported_arch)
        out.push_back(std::move(plan));
  return out;
}

CompileRequest request_for(const Config& config, const std::string& dtype) {
  return compile_request(attention_family(), flash3(), config, dtype, hopper_limits());
}

TEST(AttentionWgmma, TemplateIsHopperOnlyAndTakesThreeTensorMaps) {
  const TemplateSpec& tmpl = flash3();
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_90a"});
  const std::vector<ArgSpec>& args = kernel_args(attention_family(), tmpl);
  ASSERT_EQ(args.size(), 7u);
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(args[i].kind, ArgSpec::Kind::tensor_map);
    EXPECT_EQ(args[i].dims.size(), 3u) << "[B*H][S][D]: rows past S never reach the next head";
  }
  const auto blackwell = limits_for_arch("sm_100a").value();
  for (const VariantPlan& plan : enumerate_variants(
           attention_family(), {{"B", 1}, {"H", 1}, {"S", 128}, {"D", 64}, {"CAUSAL", 0}}, "bf16",
           blackwell))
    if (plan.tmpl->name == kTemplate) EXPECT_TRUE(plan.unsupported_arch);
}

TEST(AttentionWgmma, CoveringSetCompilesForSm90aWithoutSpills) {
  const auto chosen = test::covering_set(survivors());
  ASSERT_GE(chosen.size(), 3u);
  ASSERT_LE(chosen.size(), 12u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Config& config = chosen[i].config;
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";
    const CompileResult result = compile_kernel(request_for(config, dtype));
    const std::string at = canonical_key(config) + " " + dtype;
    ASSERT_TRUE(result.ok) << at << "\n" << result.log;
    EXPECT_FALSE(result.cubin.empty());
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_LE(result.resources.registers * (config.at("CONSUMERS") + 1) * 128, 65536) << at;
    test::expect_clean_wgmma_compile(result, at);
    for (const auto& [name, value] : config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : flash3().axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(AttentionWgmma, ShapeAssumptionsAreStaticAsserts) {
  Config config = survivors().front().config;
  config["BLOCK_N"] = 96;  // no wgmma shape of hopper_wgmma_ops.cuh
  CompileResult result = compile_kernel(request_for(config, "bf16"));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("BLOCK_N is 64, 128, 176 or 192"), std::string::npos) << result.log;

  config = survivors().front().config;
  config["CONSUMERS"] = 1;
  config["PINGPONG"] = 1;
  result = compile_kernel(request_for(config, "bf16"));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("ping-pong needs two or more"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
