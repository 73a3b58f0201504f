// The Hopper wgmma GEMM template (kernel_templates/gemm/gemm_wgmma.cuh, "wgmma_tma_ws"): its
// manifest entry prunes the space to a few hundred points at 4096^3 that fit the device (the
// TMA-store epilogue and stream-K among them), its tensor-map arguments satisfy the copy engine's
// rules for every survivor (also on the ragged smoke shape every variant runs first, where C's
// map is a small valid dummy), and a covering set of survivors (every value of every axis at
// least once, both dtypes) compiles with NVRTC for sm_90a without spills.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/variant_cover.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "wgmma_tma_ws";

using test::gemm_family;

const TemplateSpec& wgmma_template() {
  return test::gemm_template(kTemplate);
}

DeviceLimits hopper_limits() {
  auto limits = limits_for_arch("sm_90a");
  if (!limits) throw std::runtime_error("no limits for sm_90a");
  limits->sm_count = 132;  // an H100 SXM: the persistent grid depends on it
  return *limits;
}

const Shape kSquare{{"M", 4096}, {"N", 4096}, {"K", 4096}};

// The template's surviving variants for a shape.
std::vector<VariantPlan> survivors(const Shape& shape, const DeviceLimits& limits) {
  std::vector<VariantPlan> out;
  for (VariantPlan& plan : enumerate_variants(gemm_family(), shape, "bf16", limits))
    if (plan.tmpl != nullptr && plan.tmpl->name == kTemplate && !plan.unsupported_arch &&
        !plan.pruned_by)
      out.push_back(std::move(plan));
  return out;
}

std::int64_t axis(const VariantPlan& plan, const std::string& name) {
  return plan.config.at(name);
}

std::string describe(const VariantPlan& plan) {
  return canonical_key(plan.config);
}

TEST(GemmWgmma, TemplateIsHopperOnlyAndTakesTensorMaps) {
  const TemplateSpec& tmpl = wgmma_template();
  EXPECT_EQ(tmpl.kernel, "kt_gemm_wgmma");
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_90a"}) << "wgmma exists only on sm_90a";
  const std::vector<ArgSpec>& args = kernel_args(gemm_family(), tmpl);
  ASSERT_EQ(args.size(), 9u);
  EXPECT_EQ(args[1].kind, ArgSpec::Kind::tensor_map);
  EXPECT_EQ(args[1].value, "A");
  EXPECT_EQ(args[2].kind, ArgSpec::Kind::tensor_map);
  EXPECT_EQ(args[2].value, "B");
  EXPECT_EQ(args[3].kind, ArgSpec::Kind::tensor_map);
  EXPECT_EQ(args[3].value, "C");
  for (const char* name : {"SPLIT_K", "BM", "BN"})
    EXPECT_TRUE(std::any_of(tmpl.axes.begin(), tmpl.axes.end(),
                            [&](const AxisSpec& a) { return a.name == name; }))
        << name << " sizes the family's buffers";

  auto blackwell = limits_for_arch("sm_100a");
  ASSERT_TRUE(blackwell.has_value());
  for (const VariantPlan& plan : enumerate_variants(gemm_family(), kSquare, "bf16", *blackwell)) {
    if (plan.tmpl->name == kTemplate) {
      EXPECT_TRUE(plan.unsupported_arch);
    }
  }
}

TEST(GemmWgmma, SquareShapeKeepsAFewHundredVariantsThatFit) {
  const DeviceLimits limits = hopper_limits();
  const auto kept = survivors(kSquare, limits);
  EXPECT_GE(kept.size(), 100u);
  EXPECT_LE(kept.size(), 750u);
  std::set<std::pair<std::int64_t, std::int64_t>> tiles;
  bool tma_store = false, stream_k = false;
  for (const VariantPlan& plan : kept) {
    tiles.insert({axis(plan, "BM"), axis(plan, "BN")});
    tma_store |= axis(plan, "EPILOGUE") == 1;
    if (axis(plan, "SPLIT_K") == 2) {
      stream_k = true;
      EXPECT_EQ(axis(plan, "GRID") * axis(plan, "CLUSTER_M") * axis(plan, "CLUSTER_N"), 1)
          << "stream-K spins on other CTAs: persistent, unclustered " << describe(plan);
      EXPECT_NE(
          (4096 / axis(plan, "BM")) * ((4096 + axis(plan, "BN") - 1) / axis(plan, "BN")) % 132, 0)
          << "stream-K only where the last wave is partial " << describe(plan);
    }
    const ProblemInstance problem =
        instantiate(gemm_family(), wgmma_template(), plan.config, kSquare, "bf16", limits);
    const LaunchDims& launch = problem.launch;
    EXPECT_LE(launch.dynamic_smem, limits.smem_optin) << describe(plan);
    EXPECT_EQ(launch.block[0], (axis(plan, "CONSUMERS") + 1) * 128) << describe(plan);
    EXPECT_EQ(launch.grid[0] % launch.cluster[0], 0u) << describe(plan);
    EXPECT_LE(launch.cluster[0], static_cast<std::uint32_t>(limits.max_cluster));
    const auto tiles_along = [&](const char* tile) {
      return static_cast<std::uint32_t>((4096 + axis(plan, tile) - 1) / axis(plan, tile));
    };
    const std::uint32_t tiles_count = tiles_along("BM") * tiles_along("BN");
    if (axis(plan, "GRID") == 0)
      EXPECT_EQ(launch.grid[0], tiles_count) << describe(plan);
    else
      EXPECT_LE(launch.grid[0], 132u) << "persistent: at most one CTA per SM " << describe(plan);
  }
  EXPECT_TRUE(tiles.count({128, 256}) && tiles.count({256, 128}) && tiles.count({128, 128}));
  EXPECT_FALSE(tiles.count({128, 176}) || tiles.count({128, 192}))
      << "the 176- and 192-wide tiles lost at 4096^3; they are kept from 8192x8192 up";
  bool wide = false;
  for (const VariantPlan& plan : survivors({{"M", 8192}, {"N", 8192}, {"K", 8192}}, limits))
    wide |= axis(plan, "BN") == 176 || axis(plan, "BN") == 192;
  EXPECT_TRUE(wide) << "the 5-stage tiles of cuBLAS's width at 8192^3";
  EXPECT_TRUE(tma_store) << "no survivor with the TMA-store epilogue";
  EXPECT_TRUE(stream_k) << "no survivor with stream-K";
  EXPECT_FALSE(tiles.count({256, 256})) << "256 fp32 accumulators per thread cannot fit";
}

TEST(GemmWgmma, ConstraintsPruneWhatTheCopyEngineAndTheClusterCannotDo) {
  const DeviceLimits limits = hopper_limits();
  EXPECT_TRUE(survivors({{"M", 4096}, {"N", 4096}, {"K", 4100}}, limits).empty())
      << "K % 8 != 0: the row pitch is not a multiple of 16 bytes";
  const auto ragged = survivors({{"M", 384}, {"N", 4096}, {"K", 4096}}, limits);
  ASSERT_FALSE(ragged.empty());
  for (const VariantPlan& plan : ragged) {
    const std::int64_t tiles_m = (384 + axis(plan, "BM") - 1) / axis(plan, "BM");
    EXPECT_EQ(tiles_m % axis(plan, "CLUSTER_M"), 0)
        << "clusters divide the tile grid: " << describe(plan);
  }
  bool decode_tile = false;
  for (const VariantPlan& plan : survivors({{"M", 64}, {"N", 4096}, {"K", 4096}}, limits)) {
    EXPECT_LE(axis(plan, "BM"), 128) << "a 256-row tile for 64 rows: " << describe(plan);
    decode_tile |= axis(plan, "BM") == 64 && axis(plan, "STAGES") == 12;
  }
  EXPECT_TRUE(decode_tile) << "decode shapes keep the 64-row tiles and the deep rings";
  for (const VariantPlan& plan : survivors(kSquare, limits))
    EXPECT_TRUE(axis(plan, "BM") >= 128 && axis(plan, "BN") >= 128 && axis(plan, "STAGES") <= 6)
        << "decode tiles and rings on a large shape: " << describe(plan);
}

// Every variant also runs the family's ragged smoke shape, whatever the constraints say about
// it: its launch and tensor maps must be valid there too.
TEST(GemmWgmma, TensorMapsAndLaunchAreValidOnTheSmokeShapeForEverySurvivor) {
  const DeviceLimits limits = hopper_limits();
  for (const VariantPlan& plan : survivors(kSquare, limits)) {
    for (const Shape& shape : {kSquare, smoke_shape_for(gemm_family(), kSquare)}) {
      const ProblemInstance problem =
          instantiate(gemm_family(), wgmma_template(), plan.config, shape, "bf16", limits);
      EXPECT_GT(problem.launch.grid[0], 0u) << describe(plan);
      EXPECT_EQ(problem.launch.grid[0] % problem.launch.cluster[0], 0u) << describe(plan);
      int maps = 0;
      for (const ArgInstance& arg : problem.args) {
        if (arg.kind != ArgInstance::Kind::tensor_map) continue;
        ++maps;
        ASSERT_EQ(arg.dims.size(), 2u);
        ASSERT_EQ(arg.box.size(), 2u);
        EXPECT_EQ(arg.swizzle, 128u);
        EXPECT_EQ((arg.dims[0] * 2) % 16, 0) << "row pitch of " << arg.buffer;
        EXPECT_LE(arg.box[1], 256u) << describe(plan);
        if (arg.buffer == "C") {
          // The real view where N % 8 == 0, else a one-row dummy the kernel does not read.
          if (shape.at("N") % 8 == 0) {
            EXPECT_EQ(arg.dims[0], shape.at("N"));
            EXPECT_EQ(arg.box[0] * 2, 128u);
            EXPECT_EQ(arg.box[1] * axis(plan, "CONSUMERS"),
                      static_cast<std::uint32_t>(axis(plan, "BM")))
                << "one consumer's rows per store";
          } else {
            EXPECT_EQ(arg.dims[0], 8);
            EXPECT_EQ(arg.dims[1], 1);
          }
          continue;
        }
        EXPECT_EQ(arg.box[0] * 2, 128u) << "inner box = the 128-byte swizzle span";
        EXPECT_GE(arg.box[1], 8u) << describe(plan);
        EXPECT_EQ(arg.dims[0], shape.at("K"));
      }
      EXPECT_EQ(maps, 3);
    }
  }
}

// Greedy cover: keeps picking the survivor that adds the most unseen (axis, value) pairs.
std::vector<VariantPlan> covering_set(const std::vector<VariantPlan>& plans) {
  std::set<std::pair<std::string, std::int64_t>> seen;
  std::vector<VariantPlan> chosen;
  for (;;) {
    const VariantPlan* best = nullptr;
    std::size_t best_gain = 0;
    for (const VariantPlan& plan : plans) {
      std::size_t gain = 0;
      for (const auto& [name, value] : plan.config) gain += seen.count({name, value}) == 0;
      if (gain > best_gain) {
        best_gain = gain;
        best = &plan;
      }
    }
    if (best == nullptr) return chosen;
    for (const auto& [name, value] : best->config) seen.insert({name, value});
    chosen.push_back(*best);
  }
}

TEST(GemmWgmma, CoveringSetCompilesForSm90aWithoutSpills) {
  const DeviceLimits limits = hopper_limits();
  const TemplateSpec& tmpl = wgmma_template();
  // The square shape's survivors, a decode shape's (its 64-row tiles and deeper rings) and
  // 8192^3's (the 176- and 192-wide tiles).
  auto plans = survivors(kSquare, limits);
  for (const Shape& shape :
       {Shape{{"M", 64}, {"N", 4096}, {"K", 7168}}, Shape{{"M", 8192}, {"N", 8192}, {"K", 8192}}})
    for (VariantPlan& plan : survivors(shape, limits)) plans.push_back(std::move(plan));
  const auto chosen = covering_set(plans);
  ASSERT_GE(chosen.size(), 2u);
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const VariantPlan& plan = chosen[i];
    const std::string dtype = i % 2 == 0 ? "bf16" : "fp16";  // both dtypes
    const CompileResult result =
        compile_kernel(compile_request(gemm_family(), tmpl, plan.config, dtype, limits));
    ASSERT_TRUE(result.ok) << describe(plan) << " " << dtype << "\n" << result.log;
    EXPECT_FALSE(result.cubin.empty());
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_LE(result.resources.registers * (axis(plan, "CONSUMERS") + 1) * 128,
              limits.regs_per_block)
        << describe(plan);
    test::expect_clean_wgmma_compile(result, describe(plan));
    for (const auto& [name, value] : plan.config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmWgmma, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = hopper_limits();
  const TemplateSpec& tmpl = wgmma_template();
  VariantPlan plan = survivors(kSquare, limits).front();
  plan.config["BM"] = 256;
  plan.config["BN"] = 256;  // 256 accumulators per thread with 2 consumers, 512 with 1
  const CompileResult result =
      compile_kernel(compile_request(gemm_family(), tmpl, plan.config, "bf16", limits));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("<= 128 fp32 accumulators"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
