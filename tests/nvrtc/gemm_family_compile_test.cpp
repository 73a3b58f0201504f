// The shipped GEMM family (kernel_templates/gemm): its manifest loads, its constraints leave a
// sensible space for the issue's two shapes, and a small fixed sample of surviving variants
// compiles with NVRTC for sm_90a and sm_100a without spills. These checks cover the mma.sync
// templates; the wgmma and skinny templates have their own compile tests.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/error_bound.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using test::gemm_family;

DeviceLimits limits_of(const std::string& arch) {
  const auto limits = limits_for_arch(arch);
  if (!limits) throw std::runtime_error("no limits for " + arch);
  return *limits;
}

const Shape kSquare{{"M", 4096}, {"N", 4096}, {"K", 4096}};
const Shape kSkinny{{"M", 64}, {"N", 4096}, {"K", 7168}};

// Survivors of the mma.sync templates; the wgmma and skinny templates have their own tests.
std::vector<VariantPlan> survivors(const std::vector<VariantPlan>& plans) {
  std::vector<VariantPlan> out;
  std::copy_if(plans.begin(), plans.end(), std::back_inserter(out), [](const VariantPlan& p) {
    return !p.unsupported_arch && !p.pruned_by && p.tmpl->kernel == "kt_gemm_mma";
  });
  return out;
}

std::int64_t axis(const VariantPlan& plan, const std::string& name) {
  const auto found = plan.config.find(name);
  return found == plan.config.end() ? 1 : found->second;  // absent cluster axes mean 1
}

CompileRequest request_for(const VariantPlan& plan, const std::string& dtype,
                           const DeviceLimits& limits) {
  return compile_request(gemm_family(), *plan.tmpl, plan.config, dtype, limits);
}

std::string describe(const VariantPlan& plan) {
  return plan.tmpl->name + " " + canonical_key(plan.config);
}

TEST(GemmFamily, LoadsWithOneEntryPointAndTheIssueDims) {
  const Family& family = gemm_family();
  EXPECT_EQ(family.name, "gemm");
  ASSERT_EQ(family.dims.size(), 3u);
  EXPECT_EQ(family.reference.kind, "cublas_gemm");
  // Per element: two half-ulps of the dtype plus 2^-5 for reordered fp32 accumulation, plus
  // 16 * u(dtype, K) * (|A| |B|^T)_ij for partial sums rounded to the dtype
  // (kernel_templates/README.md, tuner/error_bound.hpp); a wrong element of magnitude 30 off by 1
  // must fail where the magnitude term is small (K = 256: 16 * (2^-8/16 + 2^-24) * 64 = 0.25).
  EXPECT_EQ(family.tolerance.at("bf16"), (Tolerance{0.03125, 0.0078125, 0.0078125, 16}));
  EXPECT_EQ(family.tolerance.at("fp16"), (Tolerance{0.03125, 0.0009765625, 0.0009765625, 16}));
  for (const auto& [dtype, t] : family.tolerance)
    EXPECT_LT(t.atol + t.rtol * 30 + t.magnitude * magnitude_unit_roundoff(dtype, 256) * 64, 1.0)
        << dtype;
  ASSERT_GE(family.templates.size(), 2u);
  std::set<std::string> names;
  for (const TemplateSpec& tmpl : family.templates) names.insert(tmpl.name);
  for (const char* name : {"mma_multistage_cluster", "mma_multistage", "wgmma_tma_ws"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_FALSE(validate_shape(family, smoke_shape_for(family, {}), "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, {{"M", 1 << 20}, {"N", 1 << 20}, {"K", 1}}, "bf16"))
      << "M*N beyond 2^31 elements must be refused at submission";
}

TEST(GemmFamily, MmaSquareShapeOnHopperKeepsAModerateSpace) {
  const DeviceLimits limits = limits_of("sm_90a");
  const auto plans = enumerate_variants(gemm_family(), kSquare, "bf16", limits);
  const auto kept = survivors(plans);
  const auto unsupported = std::count_if(plans.begin(), plans.end(),
                                         [](const VariantPlan& p) { return p.unsupported_arch; });
  EXPECT_EQ(unsupported, 2)
      << "the sm_80 template and the sm_100a tcgen05 one show up once each as unsupported";
  EXPECT_GE(kept.size(), 100u);
  EXPECT_LE(kept.size(), 400u);
  EXPECT_GT(plans.size() - kept.size(), 10000u) << "most of the cartesian product is pruned";
  for (const VariantPlan& plan : kept) {
    EXPECT_EQ(axis(plan, "SPLIT_K"), 1)
        << "4096^3 fills the GPU without split-K: " << describe(plan);
    const ProblemInstance problem =
        instantiate(gemm_family(), *plan.tmpl, plan.config, kSquare, "bf16", limits);
    EXPECT_LE(problem.launch.dynamic_smem, limits.smem_optin) << describe(plan);
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(problem.launch.grid[d] % problem.launch.cluster[d], 0u) << describe(plan);
  }
}

TEST(GemmFamily, MmaSkinnyShapeUsesSmallTilesAndSplitK) {
  const DeviceLimits limits = limits_of("sm_90a");
  const auto kept = survivors(enumerate_variants(gemm_family(), kSkinny, "bf16", limits));
  ASSERT_FALSE(kept.empty());
  EXPECT_TRUE(std::all_of(kept.begin(), kept.end(), [](const VariantPlan& p) {
    return axis(p, "BM") == 64;
  })) << "a 128-row tile would be half empty for M=64";
  EXPECT_TRUE(std::any_of(kept.begin(), kept.end(),
                          [](const VariantPlan& p) { return axis(p, "SPLIT_K") > 1; }));
  for (const VariantPlan& plan : kept) {
    const ProblemInstance problem =
        instantiate(gemm_family(), *plan.tmpl, plan.config, kSkinny, "bf16", limits);
    const auto split_k = axis(plan, "SPLIT_K");
    EXPECT_EQ(problem.launch.grid[2], static_cast<std::uint32_t>(split_k)) << describe(plan);
    for (const BufferInstance& buffer : problem.buffers) {
      if (buffer.name != "workspace") continue;
      EXPECT_EQ(buffer.elements, split_k > 1 ? 64 * 4096 * split_k : 1) << describe(plan);
    }
  }
}

// A fixed, small sample that still spans the space: the largest shared-memory footprint, the
// smallest block, a clustered interleaved-order variant if any, and the deepest split-K.
std::vector<VariantPlan> compile_sample(const DeviceLimits& limits) {
  auto square = survivors(enumerate_variants(gemm_family(), kSquare, "bf16", limits));
  auto skinny = survivors(enumerate_variants(gemm_family(), kSkinny, "bf16", limits));
  const auto smem = [](const VariantPlan& p) {
    return axis(p, "STAGES") * (axis(p, "BM") + axis(p, "BN")) * axis(p, "BK");
  };
  const auto area = [](const VariantPlan& p) { return axis(p, "BM") * axis(p, "BN"); };
  std::vector<VariantPlan> sample;
  sample.push_back(*std::max_element(square.begin(), square.end(),
                                     [&](auto& a, auto& b) { return smem(a) < smem(b); }));
  sample.push_back(*std::min_element(square.begin(), square.end(),
                                     [&](auto& a, auto& b) { return area(a) < area(b); }));
  const auto clustered = std::find_if(square.begin(), square.end(), [](const VariantPlan& p) {
    return axis(p, "CLUSTER_M") * axis(p, "CLUSTER_N") > 1 && axis(p, "BK") == 64;
  });
  const auto interleaved = std::find_if(
      square.rbegin(), square.rend(), [](const VariantPlan& p) { return axis(p, "K_ORDER") == 2; });
  sample.push_back(clustered != square.end() ? *clustered : *interleaved);
  sample.push_back(*std::max_element(skinny.begin(), skinny.end(), [](auto& a, auto& b) {
    return axis(a, "SPLIT_K") * 8 - axis(a, "STAGES") < axis(b, "SPLIT_K") * 8 - axis(b, "STAGES");
  }));
  return sample;
}

class GemmCompile : public ::testing::TestWithParam<const char*> {};

TEST_P(GemmCompile, SampleCompilesWithoutSpills) {
  const DeviceLimits limits = limits_of(GetParam());
  const std::string dtype = limits.sm >= 100 ? "fp16" : "bf16";  // both dtypes, once each
  for (const VariantPlan& plan : compile_sample(limits)) {
    const CompileResult result = compile_kernel(request_for(plan, dtype, limits));
    ASSERT_TRUE(result.ok) << describe(plan) << "\n" << result.log;
    EXPECT_FALSE(result.cubin.empty()) << describe(plan);
    EXPECT_GT(result.resources.registers, 0) << describe(plan) << "\n" << result.log;
    EXPECT_LE(result.resources.registers * axis(plan, "WARPS_M") * axis(plan, "WARPS_N") * 32,
              limits.regs_per_block)
        << describe(plan);
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << describe(plan) << "\n" << result.log;
    EXPECT_EQ(result.resources.spill_load_bytes, 0) << describe(plan) << "\n" << result.log;
    EXPECT_EQ(result.resources.static_smem_bytes, 0) << "all shared memory is dynamic";
  }
}

INSTANTIATE_TEST_SUITE_P(HopperAndBlackwell, GemmCompile, ::testing::Values("sm_90a", "sm_100a"));

TEST(GemmFamily, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = limits_of("sm_90a");
  VariantPlan plan = survivors(enumerate_variants(gemm_family(), kSquare, "bf16", limits)).front();
  plan.config["BK"] = 24;  // not a multiple of the mma's k16
  const CompileResult result = compile_kernel(request_for(plan, "bf16", limits));
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.cubin.empty());
  EXPECT_NE(result.log.find("static assertion failed"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("BK % 16 == 0"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
