// The ping-pong wgmma GEMM template (kernel_templates/gemm/gemm_pingpong.cuh, "wgmma_pingpong"):
// Hopper only, three tensor maps (C's a small valid dummy where N % 8 != 0, as on the family's
// smoke shape), spaces of a few hundred variants for the large square shapes that contain the
// TMA-store epilogue and stream-K, the hardware limits as constraints, and a covering set of
// survivors (every value of every axis, both dtypes) compiles with NVRTC for sm_90a without
// spills.
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

constexpr const char* kTemplate = "wgmma_pingpong";

const TemplateSpec& pingpong() {
  return test::gemm_template(kTemplate);
}

std::int64_t axis(const Config& config, const std::string& name) {
  return config.at(name);
}

std::string describe(const Config& config) {
  return std::string(kTemplate) + " " + canonical_key(config);
}

TEST(GemmPingpong, IsHopperOnlyAndTakesThreeTensorMaps) {
  const TemplateSpec& tmpl = pingpong();
  EXPECT_EQ(tmpl.kernel, "kt_gemm_pingpong");
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_90a"});
  const std::vector<ArgSpec>& args = kernel_args(gemm_family(), tmpl);
  ASSERT_EQ(args.size(), 9u);
  for (int i : {1, 2, 3}) EXPECT_EQ(args[i].kind, ArgSpec::Kind::tensor_map) << i;
  EXPECT_EQ(args[3].value, "C");
  const auto blackwell = limits_for_arch("sm_100a");
  ASSERT_TRUE(blackwell.has_value());
  for (const VariantPlan& plan :
       enumerate_variants(gemm_family(), gemm_shape(4096, 4096, 4096), "bf16", *blackwell)) {
    if (plan.tmpl->name == kTemplate) {
      EXPECT_TRUE(plan.unsupported_arch);
    }
  }
}

TEST(GemmPingpong, LargeSquareShapesKeepAFewHundredVariantsWithEveryFeature) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  for (const std::int64_t n : {4096, 8192}) {
    const Shape shape = gemm_shape(n, n, n);
    const auto kept = gemm_survivors(kTemplate, shape, limits);
    EXPECT_GE(kept.size(), 100u) << n;
    EXPECT_LE(kept.size(), 600u) << n;  // 8192: the 176- and 192-wide tiles too
    std::set<std::pair<std::string, std::int64_t>> values;
    for (const VariantPlan& plan : kept) {
      for (const auto& [name, value] : plan.config) values.insert({name, value});
      const ProblemInstance problem =
          instantiate(gemm_family(), pingpong(), plan.config, shape, "bf16", limits);
      EXPECT_LE(problem.launch.dynamic_smem, limits.smem_optin) << describe(plan.config);
      EXPECT_EQ(problem.launch.block[0], 384u);
      EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u) << describe(plan.config);
      EXPECT_LE(problem.launch.grid[0], 132u) << "persistent: at most one CTA per SM";
      EXPECT_LE(axis(plan.config, "BM") * axis(plan.config, "BN") / 128, 128)
          << "accumulators of one consumer thread";
      if (axis(plan.config, "SPLIT_K") == 2) {
        EXPECT_EQ(problem.launch.cluster[0], 1u) << "stream-K needs every CTA resident";
        const std::int64_t bm = axis(plan.config, "BM"), bn = axis(plan.config, "BN");
        EXPECT_NE(((n + bm - 1) / bm) * ((n + bn - 1) / bn) % 132, 0)
            << "stream-K only where the last wave is partial";
      }
    }
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::int64_t>>{{"EPILOGUE", 1},
                                                           {"EPILOGUE", 0},
                                                           {"SPLIT_K", 2},
                                                           {"CLUSTER_M", 2},
                                                           {"CLUSTER_N", 2},
                                                           {"BM", 64},
                                                           {"BM", 128},
                                                           {"BN", 256}})
      EXPECT_TRUE(values.count({name, value}))
          << n << ": no survivor with " << name << "=" << value;
  }
}

TEST(GemmPingpong, ConstraintsStateTheCopyEngineAndResidencyLimits) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  EXPECT_TRUE(gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4100), limits).empty())
      << "K % 8 != 0: TMA needs 16-byte row pitches";
  const auto odd_n = gemm_survivors(kTemplate, gemm_shape(4096, 32001, 4096), limits);
  ASSERT_FALSE(odd_n.empty());
  for (const VariantPlan& plan : odd_n)
    EXPECT_EQ(axis(plan.config, "EPILOGUE"), 0) << "a TMA store needs N % 8 == 0";
  // Stream-K spins on other CTAs' partial tiles: only unclustered grids are all resident.
  for (const VariantPlan& plan : gemm_survivors(kTemplate, gemm_shape(8192, 8192, 8192), limits)) {
    if (axis(plan.config, "SPLIT_K") == 2) {
      EXPECT_EQ(axis(plan.config, "CLUSTER_M") * axis(plan.config, "CLUSTER_N"), 1);
    }
  }
}

// Every variant also runs the family's ragged smoke shape (N = 45): its launch and tensor maps
// must be valid there, C's a dummy the kernel does not use.
TEST(GemmPingpong, TensorMapsAreValidOnTheSmokeShapeForEverySurvivor) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const Shape smoke = smoke_shape_for(gemm_family(), gemm_shape(4096, 4096, 4096));
  ASSERT_NE(smoke.at("N") % 8, 0) << "the smoke shape is meant to be ragged";
  for (const VariantPlan& plan : gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4096), limits)) {
    for (const Shape& shape : {gemm_shape(4096, 4096, 4096), smoke}) {
      const ProblemInstance problem =
          instantiate(gemm_family(), pingpong(), plan.config, shape, "bf16", limits);
      EXPECT_GT(problem.launch.grid[0], 0u);
      int maps = 0;
      for (const ArgInstance& arg : problem.args) {
        if (arg.kind != ArgInstance::Kind::tensor_map) continue;
        ++maps;
        ASSERT_EQ(arg.dims.size(), 2u);
        EXPECT_EQ((arg.dims[0] * 2) % 16, 0) << "row pitch of " << arg.buffer;
        EXPECT_LE(arg.box[0] * 2, 128u) << "inner box within the 128B swizzle";
        EXPECT_EQ((arg.box[0] * 2) % 16, 0u) << "inner box a multiple of 16 bytes";
        if (arg.buffer == "C" && shape.at("N") % 8 == 0) {
          EXPECT_EQ(arg.dims[0], shape.at("N"));
          EXPECT_EQ(arg.dims[1], shape.at("M"));
          EXPECT_EQ(arg.box[1], static_cast<std::uint32_t>(axis(plan.config, "BM")));
        }
      }
      EXPECT_EQ(maps, 3);
    }
  }
}

TEST(GemmPingpong, CoveringSetCompilesForSm90aWithoutSpills) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const std::vector<VariantPlan> chosen =
      test::covering_set(gemm_survivors(kTemplate, gemm_shape(8192, 8192, 8192), limits));
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 6u) << "keep the compile set small";
  std::vector<std::pair<Config, std::string>> jobs;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    jobs.emplace_back(chosen[i].config, i % 2 == 0 ? "bf16" : "fp16");
  const auto results = test::compile_pairwise(pingpong(), jobs, limits);
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CompileResult& result = results[i];
    const std::string what = describe(jobs[i].first) + " " + jobs[i].second;
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << what << "\n" << result.log;
    EXPECT_LE(result.resources.registers * 384, limits.regs_per_block) << what;
    test::expect_clean_wgmma_compile(result, what);
    for (const auto& [name, value] : jobs[i].first) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : pingpong().axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmPingpong, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  Config config = gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4096), limits).front().config;
  config["BM"] = 128;
  config["BN"] = 256;  // 256 accumulators per consumer thread
  const CompileResult result =
      test::compile_variant(gemm_family(), pingpong(), config, "bf16", limits);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("<= 128 fp32 accumulators"), std::string::npos) << result.log;

  config = gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4096), limits).front().config;
  config["SPLIT_K"] = 2;
  config["CLUSTER_M"] = 2;  // stream-K spins on other CTAs: clusters may not all be resident
  const CompileResult clustered =
      test::compile_variant(gemm_family(), pingpong(), config, "bf16", limits);
  EXPECT_FALSE(clustered.ok);
  EXPECT_NE(clustered.log.find("every CTA must be resident"), std::string::npos) << clustered.log;
}

}  // namespace
}  // namespace kt
