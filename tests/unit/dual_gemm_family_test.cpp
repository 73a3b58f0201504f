// The dual_gemm_silu family (kernel_templates/dual_gemm_silu): its manifest loads with a kernel
// reference and the unfused baseline, bad shapes are refused, the Hopper template's space prunes
// to a sensible set for the issue's shapes (small-M groups can fill the GPU through split-K), the
// tensor maps and launches of every survivor are valid on the ragged smoke shape too, and the
// reference kernel compiles with NVRTC for both dtypes.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kHopper = "wgmma_tma_ws";
constexpr const char* kBlackwell = "tcgen05_tma_ws";

const Family& dual_family() {
  return test::shipped_family("dual_gemm_silu");
}

Shape shape(std::int64_t g, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"G", g}, {"M", m}, {"N", n}, {"K", k}};
}

// The bf16 shapes of the issue's benchmark (the seed's grouped dual GEMM).
const std::vector<Shape>& issue_shapes() {
  static const std::vector<Shape> shapes{shape(8, 64, 4096, 7168),  shape(8, 128, 4096, 7168),
                                         shape(8, 256, 4096, 7168), shape(8, 128, 7168, 2048),
                                         shape(2, 192, 3072, 4096), shape(2, 320, 3072, 4096),
                                         shape(2, 128, 4096, 1536), shape(2, 384, 4096, 1536)};
  return shapes;
}

std::string text(const Shape& s) {
  return std::to_string(s.at("G")) + "x" + std::to_string(s.at("M")) + "x" +
         std::to_string(s.at("N")) + "x" + std::to_string(s.at("K"));
}

std::int64_t cdiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Work units of a Hopper variant: groups x tiles x K slices.
std::int64_t work_units(const VariantPlan& plan, const Shape& s) {
  return s.at("G") * cdiv(s.at("M"), plan.config.at("BM")) * cdiv(s.at("N"), plan.config.at("BN")) *
         plan.config.at("SPLIT_K");
}

TEST(DualGemmFamily, LoadsWithAKernelReferenceAndTheUnfusedBaseline) {
  const Family& family = dual_family();
  EXPECT_EQ(family.name, "dual_gemm_silu");
  std::vector<std::string> dims;
  for (const DimSpec& dim : family.dims) dims.push_back(dim.name);
  EXPECT_EQ(dims, (std::vector<std::string>{"G", "M", "N", "K"}));
  EXPECT_EQ(family.reference.kind, "kernel");
  EXPECT_EQ(family.reference.kernel, "kt_dual_gemm_silu_reference");
  EXPECT_EQ(family.reference.output, "C");
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->kind, "unfused_dual_gemm_silu");
  EXPECT_EQ(family.baseline->params.at("b2"), "B2");
  const TemplateSpec& hopper = test::template_named(family, kHopper);
  EXPECT_EQ(hopper.archs, std::vector<std::string>{"sm_90a"});
  const TemplateSpec& blackwell = test::template_named(family, kBlackwell);
  EXPECT_EQ(blackwell.archs, std::vector<std::string>{"sm_100a"});
  EXPECT_EQ(blackwell.resources.at("tmem_columns"), "TMEM_COLS");
  for (const char* axis : {"TMEM_COLS", "CTA_GROUP", "MULTICAST", "ACC_STAGES", "GRID"})
    EXPECT_TRUE(std::any_of(blackwell.axes.begin(), blackwell.axes.end(), [&](const AxisSpec& a) {
      return a.name == axis;
    })) << axis;
  for (const char* axis : {"SPLIT_K", "CLUSTER_M", "CLUSTER_N", "K_ORDER", "GROUP_ORDER"})
    EXPECT_TRUE(std::any_of(hopper.axes.begin(), hopper.axes.end(), [&](const AxisSpec& a) {
      return a.name == axis;
    })) << axis;
}

TEST(DualGemmFamily, RefusesShapesTheKernelsCannotTake) {
  const Family& family = dual_family();
  EXPECT_FALSE(validate_shape(family, shape(8, 256, 4096, 7168), "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, shape(8, 256, 4096, 7166), "bf16").has_value())
      << "K % 8 != 0: TMA needs 16-byte row pitches";
  EXPECT_TRUE(validate_shape(family, shape(0, 256, 4096, 7168), "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, shape(2048, 256, 4096, 7168), "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, shape(64, 8192, 8192, 8192), "bf16").has_value())
      << "G*M*K >= 2^31 elements";
  const Shape smoke = smoke_shape_for(family, shape(8, 256, 4096, 7168));
  EXPECT_EQ(smoke, shape(2, 67, 45, 200)) << "small, ragged M and N, two groups";
  EXPECT_EQ(smoke.at("K") % 8, 0) << "the smoke shape satisfies the copy engine";
}

TEST(DualGemmFamily, HopperSpaceKeepsAFewHundredFittingVariantsPerIssueShape) {
  const DeviceLimits limits = test::limits_with_sms("sm_90a", 132);
  for (const Shape& s : issue_shapes()) {
    const auto kept = test::survivors(dual_family(), kHopper, s, "bf16", limits);
    EXPECT_GE(kept.size(), 20u) << text(s);
    EXPECT_LE(kept.size(), 800u) << text(s);
    for (const VariantPlan& plan : kept) {
      const ProblemInstance problem =
          instantiate(dual_family(), test::template_named(dual_family(), kHopper), plan.config, s,
                      "bf16", limits);
      EXPECT_LE(problem.launch.dynamic_smem, limits.smem_optin) << canonical_key(plan.config);
      EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u);
      EXPECT_LE(
          2 * plan.config.at("BM") * plan.config.at("BN") / (plan.config.at("CONSUMERS") * 128),
          128)
          << "both accumulators fit the registers";
      if (s.at("M") <= 64) {
        EXPECT_EQ(plan.config.at("BM"), 64) << "a 128-row tile for 64 rows";
      }
    }
  }
}

TEST(DualGemmFamily, SmallMGroupsCanFillEverySmThroughSplitK) {
  const DeviceLimits limits = test::limits_with_sms("sm_90a", 132);
  for (const Shape& s : {shape(8, 64, 4096, 7168), shape(2, 128, 4096, 1536)}) {
    const auto kept = test::survivors(dual_family(), kHopper, s, "bf16", limits);
    std::set<std::int64_t> splits;
    std::int64_t most_units = 0;
    for (const VariantPlan& plan : kept) {
      splits.insert(plan.config.at("SPLIT_K"));
      most_units = std::max(most_units, work_units(plan, s));
      EXPECT_LE(work_units(plan, s), 4 * 132) << "split only as far as it helps";
    }
    EXPECT_GE(splits.size(), 2u) << text(s) << ": split-K variants exist";
    EXPECT_GE(most_units, 132) << text(s) << ": some variant has a unit for every SM";
  }
  for (const VariantPlan& plan :
       test::survivors(dual_family(), kHopper, shape(8, 256, 4096, 7168), "bf16", limits))
    EXPECT_EQ(plan.config.at("SPLIT_K"), 1) << "512 tiles need no split";
}

// Every variant also runs the family's ragged smoke shape, whatever the constraints say about it.
TEST(DualGemmFamily, TensorMapsAndLaunchAreValidOnTheSmokeShapeForEverySurvivor) {
  const DeviceLimits limits = test::limits_with_sms("sm_90a", 132);
  const Family& family = dual_family();
  const TemplateSpec& tmpl = test::template_named(family, kHopper);
  for (const Shape& job : {shape(8, 256, 4096, 7168), shape(8, 64, 4096, 7168)}) {
    const Shape smoke = smoke_shape_for(family, job);
    for (const VariantPlan& plan : test::survivors(family, kHopper, job, "bf16", limits)) {
      for (const Shape& s : {job, smoke}) {
        const ProblemInstance problem = instantiate(family, tmpl, plan.config, s, "bf16", limits);
        EXPECT_GT(problem.launch.grid[0], 0u) << canonical_key(plan.config);
        EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u);
        int maps = 0;
        for (const ArgInstance& arg : problem.args) {
          if (arg.kind != ArgInstance::Kind::tensor_map) continue;
          ++maps;
          ASSERT_EQ(arg.dims.size(), 3u);
          EXPECT_EQ(arg.dims[0], s.at("K"));
          EXPECT_EQ(arg.dims[2], s.at("G")) << "a group dimension: ragged tiles never cross it";
          EXPECT_EQ(arg.box[0] * 2, 128u) << "inner box = the 128-byte swizzle span";
          EXPECT_GE(arg.box[1], 8u);
          EXPECT_LE(arg.box[1], 256u);
          EXPECT_EQ(arg.box[2], 1u);
        }
        EXPECT_EQ(maps, 3);
        EXPECT_EQ(problem.reference.params.at("kernel"), "kt_dual_gemm_silu_reference");
      }
    }
  }
}

TEST(DualGemmFamily, ReferenceKernelCompilesForBothDtypes) {
  const Family& family = dual_family();
  for (const char* dtype : {"bf16", "fp16"}) {
    CompileRequest request;
    request.source_name = family.reference.source;
    for (const auto& [file, text] : family.sources)
      if (file == family.reference.source) request.source = text;
    request.headers = family.sources;
    request.kernel = family.reference.kernel;
    request.arch = "sm_90a";
    request.options = {
        std::string("-DKT_DTYPE_") + (dtype == std::string("bf16") ? "BF16" : "FP16"),
        "-DKT_SM=90"};
    const CompileResult result = compile_kernel(request);
    ASSERT_TRUE(result.ok) << dtype << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << result.log;
  }
}

}  // namespace
}  // namespace kt
