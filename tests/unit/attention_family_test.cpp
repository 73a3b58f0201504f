// The attention family (kernel_templates/attention_fwd): its manifest loads with a kernel
// reference and an external baseline, bad shapes are refused naming the dim, the smoke shape
// follows the job's D and CAUSAL, the variant space prunes to a sensible size for the issue's
// shapes with launches and tensor maps that fit the device (on the job shape and on the smoke
// shape every variant runs first), and the reference kernel compiles with NVRTC.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

const Family& attention_family() {
  return test::shipped_family("attention_fwd");
}

DeviceLimits hopper_limits() {
  DeviceLimits limits = limits_for_arch("sm_90a").value();
  limits.sm_count = 132;  // an H100 SXM
  return limits;
}

Shape attention_shape(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d,
                      std::int64_t causal) {
  return {{"B", b}, {"H", h}, {"S", s}, {"D", d}, {"CAUSAL", causal}};
}

// Surviving variants of one template for a shape.
std::vector<VariantPlan> survivors(const std::string& tmpl, const Shape& shape,
                                   const DeviceLimits& limits) {
  std::vector<VariantPlan> out;
  for (VariantPlan& plan : enumerate_variants(attention_family(), shape, "bf16", limits))
    if (plan.tmpl != nullptr && plan.tmpl->name == tmpl && !plan.unsupported_arch &&
        !plan.pruned_by)
      out.push_back(std::move(plan));
  return out;
}

TEST(AttentionFamily, LoadsWithKernelReferenceAndExternalBaseline) {
  const Family& family = attention_family();
  EXPECT_EQ(family.name, "attention_fwd");
  EXPECT_EQ(family.dtypes, (std::vector<std::string>{"bf16", "fp16"}));
  ASSERT_EQ(family.reference.kind, "kernel");
  EXPECT_EQ(family.reference.kernel, "kt_attention_reference");
  EXPECT_EQ(family.reference.output, "O");
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->kind, "external");
  EXPECT_NE(family.baseline->description.find("scaled_dot_product_attention"), std::string::npos);
  std::set<std::string> templates;
  for (const TemplateSpec& tmpl : family.templates) templates.insert(tmpl.name);
  EXPECT_EQ(templates, (std::set<std::string>{"mma_flash2", "wgmma_flash3"}));
  const auto causal = std::find_if(family.dims.begin(), family.dims.end(),
                                   [](const DimSpec& d) { return d.name == "CAUSAL"; });
  ASSERT_NE(causal, family.dims.end());
  EXPECT_EQ(causal->default_value, 0);
  // bf16 keeps 8 significant bits to fp16's 11: every bound is looser.
  EXPECT_GT(family.tolerance.at("bf16").rtol, family.tolerance.at("fp16").rtol);
  EXPECT_GT(family.tolerance.at("bf16").atol, family.tolerance.at("fp16").atol);
  EXPECT_GT(family.tolerance.at("bf16").max_rel_l2, family.tolerance.at("fp16").max_rel_l2);
}

TEST(AttentionFamily, BadShapesAreRefusedNamingTheDim) {
  const Family& family = attention_family();
  const Shape good = attention_shape(4, 16, 4096, 128, 0);
  EXPECT_EQ(validate_shape(family, good, "bf16"), std::nullopt);
  EXPECT_EQ(
      validate_shape(family, with_default_dims(family, {{"B", 1}, {"H", 8}, {"S", 512}, {"D", 64}}),
                     "fp16"),
      std::nullopt)
      << "CAUSAL defaults to 0";

  const auto unknown_d = validate_shape(family, attention_shape(1, 1, 128, 96, 0), "bf16");
  ASSERT_TRUE(unknown_d.has_value());
  EXPECT_NE(unknown_d->find("D == 64"), std::string::npos) << *unknown_d;

  const auto long_s = validate_shape(family, attention_shape(1, 1, 65537, 64, 0), "bf16");
  ASSERT_TRUE(long_s.has_value());
  EXPECT_NE(long_s->find("S=65537"), std::string::npos) << *long_s;

  const auto overflow = validate_shape(family, attention_shape(64, 64, 8192, 128, 0), "bf16");
  ASSERT_TRUE(overflow.has_value());
  EXPECT_NE(overflow->find("B*H*S*D"), std::string::npos) << *overflow;

  EXPECT_TRUE(validate_shape(family, attention_shape(1, 1, 128, 64, 2), "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, attention_shape(1, 1, 128, 64, 0), "f32").has_value());
}

TEST(AttentionFamily, SmokeShapeFollowsTheJobsHeadDimAndMask) {
  const Shape smoke = smoke_shape_for(attention_family(), attention_shape(4, 16, 4096, 128, 1));
  EXPECT_EQ(smoke, attention_shape(1, 1, 67, 128, 1));
  EXPECT_EQ(validate_shape(attention_family(), smoke, "bf16"), std::nullopt);
}

TEST(AttentionFamily, ReferenceRunsOneBlockPerQueryRow) {
  const Family& family = attention_family();
  const DeviceLimits limits = hopper_limits();
  const Shape shape = attention_shape(2, 3, 1000, 64, 1);
  const VariantPlan plan = survivors("mma_flash2", shape, limits).front();
  const ProblemInstance problem =
      instantiate(family, *plan.tmpl, plan.config, shape, "bf16", limits);
  ASSERT_EQ(problem.reference.kind, "kernel");
  const nlohmann::json& ref = problem.reference.params;
  EXPECT_EQ(ref["launch"]["grid"], (std::vector<int>{1000, 6, 1}));
  EXPECT_EQ(ref["launch"]["block"], (std::vector<int>{128, 1, 1}));
  ASSERT_EQ(ref["args"].size(), 10u);
  EXPECT_EQ(ref["args"][0]["kind"], "reference_output");
  EXPECT_EQ(ref["args"][8]["value"], 1) << "CAUSAL";
  EXPECT_NEAR(ref["args"][9]["value"].get<double>(), 0.125, 1e-9) << "1/sqrt(D)";
  EXPECT_DOUBLE_EQ(problem.flops, 4.0 * 6 * 1000 * 1000 * 64 * 0.5) << "causal counts half";
}

TEST(AttentionFamily, SpacePrunesToASensibleSizeForTheIssuesShapes) {
  const DeviceLimits limits = hopper_limits();
  struct Case {
    Shape shape;
    std::size_t min_flash3, max_flash3, min_flash2, max_flash2;
  };
  // Ranges around the counts the manifest gives today (27/10, 81/30, 27/10, 17/11, 51/33): a
  // constraint that stops pruning, or prunes everything, shows up here.
  const std::vector<Case> cases = {
      {attention_shape(4, 16, 4096, 128, 0), 20, 40, 6, 16},
      {attention_shape(4, 16, 4096, 128, 1), 60, 120, 20, 45},
      {attention_shape(2, 16, 8192, 128, 0), 20, 40, 6, 16},
      {attention_shape(1, 1, 128, 64, 0), 10, 30, 6, 18},
      {attention_shape(1, 1, 128, 64, 1), 30, 80, 20, 50},
  };
  for (const Case& c : cases) {
    const auto flash3 = survivors("wgmma_flash3", c.shape, limits);
    const auto flash2 = survivors("mma_flash2", c.shape, limits);
    const std::string at = canonical_key(c.shape);
    EXPECT_GE(flash3.size(), c.min_flash3) << at;
    EXPECT_LE(flash3.size(), c.max_flash3) << at;
    EXPECT_GE(flash2.size(), c.min_flash2) << at;
    EXPECT_LE(flash2.size(), c.max_flash2) << at;
    for (const auto* plans : {&flash3, &flash2})
      for (const VariantPlan& plan : *plans) {
        EXPECT_EQ(plan.config.at("HEAD_DIM"), c.shape.at("D")) << at;
        EXPECT_EQ(plan.config.at("IS_CAUSAL"), c.shape.at("CAUSAL")) << at;
        if (c.shape.at("CAUSAL") == 0) EXPECT_EQ(plan.config.at("TILE_ORDER"), 0) << at;
      }
  }
  // A 128-row query tile for 128 rows is kept, a 256-row one is not.
  for (const VariantPlan& plan :
       survivors("wgmma_flash3", attention_shape(1, 1, 128, 64, 0), limits))
    EXPECT_LE(plan.config.at("BLOCK_M"), 192);
  // The tiles FlashAttention-3 uses on an H100 are in the space.
  bool fa3_tile = false;
  for (const VariantPlan& plan :
       survivors("wgmma_flash3", attention_shape(4, 16, 4096, 128, 0), limits))
    fa3_tile |= plan.config.at("BLOCK_M") == 128 && plan.config.at("BLOCK_N") == 176 &&
                plan.config.at("CONSUMERS") == 2 && plan.config.at("PINGPONG") == 1;
  EXPECT_TRUE(fa3_tile);
}

// Every variant also runs the family's ragged smoke shape: its launch and tensor maps must be
// valid there as well as on the job's shape.
TEST(AttentionFamily, LaunchesAndTensorMapsFitOnJobAndSmokeShapes) {
  const Family& family = attention_family();
  const DeviceLimits limits = hopper_limits();
  for (const Shape& job :
       {attention_shape(4, 16, 4096, 128, 1), attention_shape(1, 8, 512, 64, 0)}) {
    for (const std::string tmpl : {"wgmma_flash3", "mma_flash2"}) {
      for (const VariantPlan& plan : survivors(tmpl, job, limits)) {
        for (const Shape& shape : {job, smoke_shape_for(family, job)}) {
          const ProblemInstance problem =
              instantiate(family, *plan.tmpl, plan.config, shape, "bf16", limits);
          const std::string at = canonical_key(plan.config) + " on " + canonical_key(shape);
          const LaunchDims& launch = problem.launch;
          EXPECT_LE(launch.dynamic_smem, limits.smem_optin) << at;
          EXPECT_LE(launch.block[0], static_cast<std::uint32_t>(limits.max_threads)) << at;
          EXPECT_LE(launch.grid[1], 65535u) << at;
          const std::int64_t block_m = plan.config.at("BLOCK_M");
          const std::int64_t heads = shape.at("B") * shape.at("H");
          const std::int64_t m_blocks = (shape.at("S") + block_m - 1) / block_m;
          EXPECT_EQ(static_cast<std::int64_t>(launch.grid[0]) * launch.grid[1], m_blocks * heads)
              << at;
          int maps = 0;
          for (const ArgInstance& arg : problem.args) {
            if (arg.kind != ArgInstance::Kind::tensor_map) continue;
            ++maps;
            ASSERT_EQ(arg.dims.size(), 3u) << at;
            EXPECT_EQ(arg.dims[0], shape.at("D"));
            EXPECT_EQ(arg.dims[1], shape.at("S")) << "rows past S read as zero";
            EXPECT_EQ(arg.dims[2], heads);
            EXPECT_EQ(arg.box[0] * 2, 128u) << "inner box = the 128-byte swizzle span";
            EXPECT_EQ(arg.box[2], 1u);
            EXPECT_EQ(arg.swizzle, 128u);
          }
          EXPECT_EQ(maps, tmpl == "wgmma_flash3" ? 3 : 0) << at;
        }
      }
    }
  }
}

TEST(AttentionFamily, ReferenceCompilesForBothDtypes) {
  const Family& family = attention_family();
  for (const std::string dtype : {"bf16", "fp16"}) {
    CompileRequest request;
    request.source_name = family.reference.source;
    for (const auto& [name, text] : family.sources)
      if (name == family.reference.source) request.source = text;
    request.headers = family.sources;
    request.kernel = family.reference.kernel;
    request.arch = "sm_90a";
    request.options = {dtype == "bf16" ? "-DKT_DTYPE_BF16" : "-DKT_DTYPE_FP16", "-DKT_SM=90"};
    const CompileResult result = compile_kernel(request);
    ASSERT_TRUE(result.ok) << dtype << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << result.log;
    EXPECT_EQ(result.resources.stack_frame_bytes, 0) << result.log;
  }
}

}  // namespace
}  // namespace kt
