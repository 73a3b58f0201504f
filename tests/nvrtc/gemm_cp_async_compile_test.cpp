// The cp.async wgmma GEMM template (kernel_templates/gemm/gemm_cp_async.cuh, "wgmma_cp_async"):
// it takes the shapes the TMA templates cannot (K % 8 != 0) with the widest copy each K allows,
// narrow wgmma n tiles for a small N (A on the m side) or a small M (swapped), cluster split-K
// that keeps grids near one wave, and no variant for the large aligned shapes the TMA templates
// own; a covering set of survivors (every value of every axis, both dtypes) compiles with NVRTC
// for sm_90a without spills.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/variant_cover.hpp"

namespace kt {
namespace {

using test::gemm_family;
using test::gemm_limits;
using test::gemm_shape;
using test::gemm_survivors;

constexpr const char* kTemplate = "wgmma_cp_async";

const TemplateSpec& cp_async() {
  return test::gemm_template(kTemplate);
}

std::string describe(const Config& config) {
  return std::string(kTemplate) + " " + canonical_key(config);
}

std::set<std::int64_t> values_of(const std::vector<VariantPlan>& plans, const std::string& axis) {
  std::set<std::int64_t> out;
  for (const VariantPlan& plan : plans) out.insert(plan.config.at(axis));
  return out;
}

TEST(GemmCpAsync, IsHopperOnlyAndTakesPlainPointers) {
  const TemplateSpec& tmpl = cp_async();
  EXPECT_EQ(tmpl.kernel, "kt_gemm_cp_async");
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_90a"});
  for (const ArgSpec& arg : kernel_args(gemm_family(), tmpl))
    EXPECT_NE(arg.kind, ArgSpec::Kind::tensor_map) << "no TMA: any row pitch";
  for (const char* axis : {"SPLIT_K", "BM", "BN"})
    EXPECT_TRUE(std::any_of(tmpl.axes.begin(), tmpl.axes.end(),
                            [&](const AxisSpec& a) { return a.name == axis; }))
        << axis << " sizes the family's buffers";
}

TEST(GemmCpAsync, EveryKGetsTheWidestCopyItsRowsAllow) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const std::vector<std::pair<std::int64_t, std::int64_t>> k_to_vec = {
      {4096, 16}, {4100, 8}, {4098, 4}, {4097, 2}};
  for (const auto& [k, vec] : k_to_vec) {
    const auto kept = gemm_survivors(kTemplate, gemm_shape(16, 4096, k), limits);
    ASSERT_FALSE(kept.empty()) << "K=" << k;
    EXPECT_EQ(values_of(kept, "VEC"), std::set<std::int64_t>{vec}) << "K=" << k;
  }
  EXPECT_TRUE(gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4096), limits).empty())
      << "large aligned shapes belong to the TMA templates";
  EXPECT_FALSE(gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4097), limits).empty())
      << "odd K: the only wgmma path";
}

TEST(GemmCpAsync, SmallNUsesNarrowTilesAndSmallMIsSwapped) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const auto small_n = gemm_survivors(kTemplate, gemm_shape(4096, 96, 4096), limits);
  ASSERT_FALSE(small_n.empty());
  EXPECT_EQ(values_of(small_n, "SWAP"), std::set<std::int64_t>{0});
  EXPECT_TRUE(values_of(small_n, "BN").count(96)) << "one n tile covers N = 96";
  EXPECT_LE(*values_of(small_n, "BN").rbegin(), 96) << "no n tile wider than N";
  EXPECT_TRUE(values_of(small_n, "SPLIT_K").count(4)) << "32-64 row tiles need split-K";

  const auto decode = gemm_survivors(kTemplate, gemm_shape(16, 4096, 4097), limits);
  ASSERT_FALSE(decode.empty());
  EXPECT_EQ(values_of(decode, "SWAP"), std::set<std::int64_t>{1});
  EXPECT_EQ(values_of(decode, "BM"), std::set<std::int64_t>{16}) << "n = 16 for 16 tokens";
  for (const VariantPlan& plan : decode) {
    const ProblemInstance problem = instantiate(gemm_family(), cp_async(), plan.config,
                                                gemm_shape(16, 4096, 4097), "bf16", limits);
    const LaunchDims& launch = problem.launch;
    const std::uint32_t ctas = launch.grid[0] * launch.grid[1] * launch.grid[2];
    EXPECT_GE(ctas, 99u) << "fills most of the GPU: " << describe(plan.config);
    EXPECT_LE(ctas, 264u) << describe(plan.config);
    EXPECT_EQ(launch.cluster[2], launch.grid[2]) << "one cluster per output tile";
    EXPECT_EQ(launch.grid[0], static_cast<std::uint32_t>(4096 / plan.config.at("BN")))
        << "B's rows on the m side";
    EXPECT_LE(launch.dynamic_smem, limits.smem_optin);
  }
}

// Shapes whose survivors together hold every axis value: each copy width (K % 8, 4, 2, odd),
// small N of 16..96 and small M of 16..96.
const std::vector<Shape>& covering_shapes() {
  static const std::vector<Shape> shapes = {gemm_shape(4096, 96, 4096), gemm_shape(16, 4096, 4097),
                                            gemm_shape(32, 4096, 4098), gemm_shape(48, 4096, 4100),
                                            gemm_shape(96, 4096, 4096), gemm_shape(4096, 16, 4096),
                                            gemm_shape(3000, 32, 4097), gemm_shape(1000, 48, 1002)};
  return shapes;
}

TEST(GemmCpAsync, CoveringSetCompilesForSm90aWithoutSpills) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const auto jobs = test::covering_jobs(kTemplate, covering_shapes(), limits);
  ASSERT_GE(jobs.size(), 2u);
  EXPECT_LE(jobs.size(), 10u) << "keep the compile set small";
  const auto results = test::compile_pairwise(cp_async(), jobs, limits);
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CompileResult& result = results[i];
    const Config& config = jobs[i].first;
    const std::string what = describe(config) + " " + jobs[i].second;
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << what << "\n" << result.log;
    EXPECT_LE(result.resources.registers * config.at("WARPGROUPS") * 128, limits.regs_per_block)
        << what;
    test::expect_clean_wgmma_compile(result, what);
    for (const auto& [name, value] : config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : cp_async().axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmCpAsync, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  Config config = gemm_survivors(kTemplate, gemm_shape(4096, 96, 4096), limits).front().config;
  config["SWAP"] = 0;
  config["BM"] = 96;  // the m side must be whole 64-row wgmma blocks
  const CompileResult result =
      test::compile_variant(gemm_family(), cp_async(), config, "bf16", limits);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("whole wgmma m64 blocks"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
