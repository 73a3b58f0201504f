// The stream-K decode-shape GEMM template (kernel_templates/gemm/gemm_skinny_stream_k.cuh,
// "skinny_stream_k"): Hopper only, TMA tensor maps of the weights and tokens (so K % 8 == 0), one
// token tile that holds M, a persistent grid of one CTA per SM on the decode shapes, exactly one
// SPLIT_K per tile shape (the smallest that fills the GPU), clusters of 2 sharing token tiles
// only where tokens are many, and a launch that keeps every output tile within SPLIT_K pieces on
// any shape the variant runs on (the smoke shape too); a covering set of survivors (every value of
// every axis, both dtypes) compiles with NVRTC for sm_90a without spills.
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

constexpr const char* kTemplate = "skinny_stream_k";

const TemplateSpec& stream_k() {
  return test::gemm_template(kTemplate);
}

std::string describe(const Config& config, const Shape& shape) {
  return std::string(kTemplate) + " " + canonical_key(config) + " on " + canonical_key(shape);
}

std::int64_t cdiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The kernel's deal (struct Deal in the source), replayed on the host: the most clusters any tile
// of the deal (CLUSTER*BN weight rows) is shared by, for a grid of `grid` CTAs; 0 when some
// cluster would get no unit.
std::int64_t most_pieces_per_tile(const Config& c, const Shape& s, std::int64_t grid) {
  const std::int64_t ctas = grid / c.at("CLUSTER");
  const std::int64_t tiles =
      cdiv(s.at("M"), c.at("BM")) * cdiv(s.at("N"), c.at("BN") * c.at("CLUSTER"));
  const std::int64_t per_tile = cdiv(s.at("K"), c.at("BK"));
  const std::int64_t granule = c.at("SPLIT_K") == 1 ? per_tile : 1;
  const std::int64_t units = tiles * per_tile / granule;
  const std::int64_t per = units / ctas, extra = units % ctas;
  if (per < 1) return 0;
  const auto owner = [&](std::int64_t unit) {
    const std::int64_t u = unit / granule, big = extra * (per + 1);
    return u < big ? u / (per + 1) : extra + (u - big) / per;
  };
  std::int64_t most = 0;
  for (std::int64_t t = 0; t < tiles; ++t)
    most = std::max(most, owner((t + 1) * per_tile - 1) - owner(t * per_tile) + 1);
  return most;
}

TEST(GemmSkinnyStreamK, IsHopperOnlyAndStreamsThroughTensorMaps) {
  const TemplateSpec& tmpl = stream_k();
  EXPECT_EQ(tmpl.kernel, "kt_gemm_skinny_stream_k");
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_90a"});
  int maps = 0;
  for (const ArgSpec& arg : kernel_args(gemm_family(), tmpl))
    maps += arg.kind == ArgSpec::Kind::tensor_map ? 1 : 0;
  EXPECT_EQ(maps, 2) << "weights and tokens";
  for (const char* axis : {"SPLIT_K", "BM", "BN"})
    EXPECT_TRUE(std::any_of(tmpl.axes.begin(), tmpl.axes.end(),
                            [&](const AxisSpec& a) { return a.name == axis; }))
        << axis << " sizes the family's buffers";
  const DeviceLimits limits = gemm_limits("sm_90a");
  EXPECT_TRUE(gemm_survivors(kTemplate, gemm_shape(16, 4096, 4097), limits).empty())
      << "K % 8 != 0: no 16-byte row pitch for the copy engine";
  EXPECT_TRUE(gemm_survivors(kTemplate, gemm_shape(4096, 4096, 4096), limits).empty())
      << "large M belongs to the other templates";
  EXPECT_TRUE(gemm_survivors(kTemplate, gemm_shape(16, 4096, 4096), gemm_limits("sm_100a")).empty())
      << "wgmma is sm_90a-only";
}

TEST(GemmSkinnyStreamK, DecodeShapesFillEverySmWithOneSplitPerTileShape) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const std::map<std::int64_t, std::int64_t> token_tile = {
      {1, 8}, {16, 16}, {33, 64}, {64, 64}, {128, 128}};
  for (const auto& [m, bm] : token_tile) {
    const Shape s = gemm_shape(m, 4096, 7168);
    const auto kept = gemm_survivors(kTemplate, s, limits);
    ASSERT_FALSE(kept.empty()) << "M=" << m;
    EXPECT_LE(kept.size(), 100u) << "M=" << m;
    std::set<std::vector<std::int64_t>> tile_shapes;
    for (const VariantPlan& plan : kept) {
      const Config& c = plan.config;
      EXPECT_EQ(c.at("BM"), bm) << describe(c, s);
      EXPECT_TRUE(tile_shapes
                      .insert({c.at("BN"), c.at("BK"), c.at("STAGES"), c.at("CONSUMERS"),
                               c.at("L2_HINT"), c.at("CLUSTER")})
                      .second)
          << "one SPLIT_K per tile shape: " << describe(c, s);
      const ProblemInstance p = instantiate(gemm_family(), stream_k(), c, s, "bf16", limits);
      const auto cluster = static_cast<std::uint32_t>(c.at("CLUSTER"));
      EXPECT_EQ(p.launch.grid[0], limits.sm_count / cluster * cluster) << describe(c, s);
      EXPECT_EQ(p.launch.grid[1] * p.launch.grid[2], 1u);
      EXPECT_EQ(p.launch.cluster, (std::array<std::uint32_t, 3>{cluster, 1, 1}));
      EXPECT_TRUE(cluster == 1 || c.at("BM") >= 32) << "multicast slices of 8+ token rows";
      EXPECT_LE(p.launch.dynamic_smem, limits.smem_optin) << describe(c, s);
      const std::int64_t pieces = most_pieces_per_tile(c, s, p.launch.grid[0]);
      EXPECT_GE(pieces, 1) << describe(c, s);
      EXPECT_LE(pieces, c.at("SPLIT_K")) << describe(c, s);
    }
  }
}

// The launch formula, not the constraints, keeps pieces within SPLIT_K: a variant chosen for a
// decode shape also runs the smoke shape and whatever shape a test gives it.
TEST(GemmSkinnyStreamK, EveryShapeKeepsItsTilesWithinSplitKPieces) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  std::vector<Config> configs;
  for (const Shape& s : {gemm_shape(1, 4096, 7168), gemm_shape(64, 4096, 7168),
                         gemm_shape(128, 4096, 7168), gemm_shape(7, 1000, 72)})
    for (const VariantPlan& plan : gemm_survivors(kTemplate, s, limits))
      configs.push_back(plan.config);
  ASSERT_FALSE(configs.empty());
  for (const Config& c : configs)
    for (const Shape& s : {gemm_shape(67, 45, 200), gemm_shape(1, 1, 8), gemm_shape(100, 4100, 72),
                           gemm_shape(33, 333, 1000), gemm_shape(7, 4096, 7168)}) {
      const ProblemInstance p = instantiate(gemm_family(), stream_k(), c, s, "bf16", limits);
      ASSERT_GE(p.launch.grid[0], 1u) << describe(c, s);
      EXPECT_LE(p.launch.grid[0], static_cast<std::uint32_t>(limits.sm_count)) << describe(c, s);
      EXPECT_EQ(p.launch.grid[0] % c.at("CLUSTER"), 0u) << "whole clusters: " << describe(c, s);
      const std::int64_t pieces = most_pieces_per_tile(c, s, p.launch.grid[0]);
      EXPECT_GE(pieces, 1) << "a CTA without work: " << describe(c, s);
      EXPECT_LE(pieces, c.at("SPLIT_K")) << describe(c, s);
    }
}

TEST(GemmSkinnyStreamK, CoveringSetCompilesForSm90aWithoutSpills) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  const auto jobs = test::covering_jobs(
      kTemplate,
      {gemm_shape(1, 4096, 7168), gemm_shape(16, 4096, 7168), gemm_shape(32, 4096, 7168),
       gemm_shape(64, 4096, 7168), gemm_shape(128, 4096, 7168), gemm_shape(7, 1000, 72),
       gemm_shape(1, 128256, 4096), gemm_shape(16, 8192, 256), gemm_shape(1, 64, 16384),
       gemm_shape(1, 6144, 2048), gemm_shape(1, 512, 1024), gemm_shape(1, 1024, 2048)},
      limits);
  ASSERT_GE(jobs.size(), 2u);
  EXPECT_LE(jobs.size(), 10u) << "keep the compile set small";
  const auto results = test::compile_pairwise(stream_k(), jobs, limits);
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CompileResult& result = results[i];
    const Config& config = jobs[i].first;
    const std::string what =
        std::string(kTemplate) + " " + canonical_key(config) + " " + jobs[i].second;
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << what << "\n" << result.log;
    test::expect_clean_wgmma_compile(result, what);
    for (const auto& [name, value] : config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : stream_k().axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmSkinnyStreamK, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = gemm_limits("sm_90a");
  Config config = gemm_survivors(kTemplate, gemm_shape(16, 4096, 7168), limits).front().config;
  config["BM"] = 24;  // no n24 tile in the kernel's list
  const CompileResult result =
      test::compile_variant(gemm_family(), stream_k(), config, "bf16", limits);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("BM is 8, 16, 32, 64 or 128"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
