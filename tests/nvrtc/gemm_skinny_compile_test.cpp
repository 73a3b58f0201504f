// The skinny_splitk template of the GEMM family (kernel_templates/gemm/gemm_skinny.cuh): its space
// for the decode shapes stays small and sensible, its launch forms one cluster per output
// tile, and a set of variants that uses every value of every axis compiles with NVRTC for each of
// its archs without spills.
#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "skinny_splitk";

using test::gemm_family;

const TemplateSpec& skinny_template() {
  return test::gemm_template(kTemplate);
}

// The arch's table limits with an H100's SM count, so the grid-size constraints act as on a GPU.
DeviceLimits limits_of(const std::string& arch) {
  auto limits = limits_for_arch(arch);
  if (!limits) throw std::runtime_error("no limits for " + arch);
  limits->sm_count = 132;
  return *limits;
}

Shape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}

// The decode shapes, plus M=32 (the only place a 32-token tile is kept).
const std::vector<Shape>& decode_shapes() {
  static const std::vector<Shape> shapes = {shape(1, 4096, 7168),   shape(16, 4096, 7168),
                                            shape(32, 4096, 7168),  shape(64, 4096, 7168),
                                            shape(128, 4096, 7168), shape(256, 7168, 2048)};
  return shapes;
}

// Enumerating a shape's space takes a moment, so every (arch, shape) is enumerated once.
const std::vector<VariantPlan>& skinny_survivors(const Shape& s, const DeviceLimits& limits) {
  static std::map<std::pair<std::string, Shape>, std::vector<VariantPlan>> cache;
  auto [at, fresh] = cache.try_emplace({limits.arch, s});
  if (fresh)
    for (VariantPlan& plan : enumerate_variants(gemm_family(), s, "bf16", limits))
      if (plan.tmpl->name == kTemplate && !plan.unsupported_arch && !plan.pruned_by)
        at->second.push_back(std::move(plan));
  return at->second;
}

std::string describe(const Config& config) {
  return std::string(kTemplate) + " " + canonical_key(config);
}

TEST(GemmSkinnyTemplate, IsInTheFamilyForHopperAndBlackwellWithWgmmaOnHopperOnly) {
  const TemplateSpec& tmpl = skinny_template();
  EXPECT_EQ(tmpl.kernel, "kt_gemm_skinny");
  EXPECT_EQ(tmpl.archs, (std::vector<std::string>{"sm_90a", "sm_100a"}));
  for (const char* axis : {"SPLIT_K", "BM", "BN"})
    EXPECT_TRUE(std::any_of(tmpl.axes.begin(), tmpl.axes.end(),
                            [&](const AxisSpec& a) { return a.name == axis; }))
        << axis << " is used by the family's workspace and semaphore sizes";
  const DeviceLimits blackwell = limits_of("sm_100a");
  for (const Shape& s : decode_shapes())
    for (const VariantPlan& plan : skinny_survivors(s, blackwell))
      EXPECT_EQ(plan.config.at("MMA"), 0) << "wgmma is sm_90a-only: " << describe(plan.config);
}

TEST(GemmSkinnyTemplate, DecodeShapesKeepAFewHundredVariantsAndOneClusterPerTile) {
  const DeviceLimits limits = limits_of("sm_90a");
  for (const Shape& s : decode_shapes()) {
    const auto kept = skinny_survivors(s, limits);
    const std::int64_t m = s.at("M");
    EXPECT_GE(kept.size(), 30u) << "M=" << m;
    EXPECT_LE(kept.size(), 400u) << "M=" << m;
    for (const VariantPlan& plan : kept) {
      const auto& c = plan.config;
      EXPECT_TRUE(c.at("BM") == 16 || 2 * m > c.at("BM"))
          << "token tile mostly empty: " << describe(c);
      EXPECT_GE(c.at("BM"), std::min<std::int64_t>(m, 64))
          << "weights re-streamed: " << describe(c);
      const ProblemInstance p = instantiate(gemm_family(), *plan.tmpl, c, s, "bf16", limits);
      EXPECT_EQ(p.launch.grid[2], static_cast<std::uint32_t>(c.at("SPLIT_K"))) << describe(c);
      EXPECT_EQ(p.launch.cluster,
                (std::array<std::uint32_t, 3>{1, 1, static_cast<std::uint32_t>(c.at("SPLIT_K"))}))
          << describe(c);
      EXPECT_LE(p.launch.cluster[2], static_cast<std::uint32_t>(limits.max_cluster));
      EXPECT_LE(p.launch.dynamic_smem, limits.smem_optin) << describe(c);
      const std::uint64_t blocks =
          std::uint64_t{p.launch.grid[0]} * p.launch.grid[1] * p.launch.grid[2];
      EXPECT_LE(blocks, 4u * 132u) << describe(c);
    }
  }
  EXPECT_TRUE(skinny_survivors(shape(4096, 4096, 4096), limits).empty())
      << "large M belongs to the other templates";
  EXPECT_FALSE(skinny_survivors(shape(67, 45, 200), limits).empty())
      << "a small ragged shape keeps the largest split";
}

using AxisValues = std::set<std::pair<std::string, std::int64_t>>;

AxisValues every_axis_value() {
  AxisValues all;
  for (const AxisSpec& axis : skinny_template().axes)
    for (std::int64_t v : axis.values) all.insert({axis.name, v});
  return all;
}

// Greedy cover of the (axis, value) pairs that survive on this arch for some decode shape, in
// enumeration order: deterministic, and a handful of variants. `uncovered` gets the pairs that
// survive nowhere on this arch (wgmma off sm_90a, say).
std::vector<Config> covering_configs(const DeviceLimits& limits, AxisValues* uncovered) {
  AxisValues missing = every_axis_value();
  std::vector<Config> pool;
  for (const Shape& s : decode_shapes())
    for (const VariantPlan& plan : skinny_survivors(s, limits)) pool.push_back(plan.config);
  std::vector<Config> chosen;
  while (!missing.empty()) {
    std::size_t best_gain = 0;
    const Config* best = nullptr;
    for (const Config& c : pool) {
      std::size_t gain = 0;
      for (const auto& [name, value] : c) gain += missing.count({name, value});
      if (gain > best_gain) best_gain = gain, best = &c;
    }
    if (best == nullptr) break;
    for (const auto& [name, value] : *best) missing.erase({name, value});
    chosen.push_back(*best);
  }
  if (uncovered != nullptr) *uncovered = missing;
  return chosen;
}

TEST(GemmSkinnyTemplate, EveryAxisValueSurvivesOnSomeArch) {
  AxisValues on_hopper, on_blackwell;
  covering_configs(limits_of("sm_90a"), &on_hopper);
  covering_configs(limits_of("sm_100a"), &on_blackwell);
  for (const auto& [name, value] : on_hopper)
    EXPECT_TRUE(on_blackwell.count({name, value}) == 0)
        << name << "=" << value << " survives for none of the decode shapes on any arch";
  EXPECT_TRUE(on_hopper.empty()) << "every value is reachable on sm_90a";
  // Only wgmma variants use 128-token or 256-row tiles, or 8 and 16 warps of 16 rows each.
  EXPECT_EQ(on_blackwell,
            (AxisValues{{"BM", 128}, {"BN", 256}, {"MMA", 1}, {"WARPS_N", 8}, {"WARPS_N", 16}}))
      << "only the wgmma path is missing on sm_100a";
}

CompileRequest request_for(const Config& config, const std::string& dtype,
                           const DeviceLimits& limits) {
  return compile_request(gemm_family(), skinny_template(), config, dtype, limits);
}

class GemmSkinnyCompile : public ::testing::TestWithParam<const char*> {};

TEST_P(GemmSkinnyCompile, EveryAxisValueCompilesWithoutSpills) {
  const DeviceLimits limits = limits_of(GetParam());
  const std::string dtype = limits.sm >= 100 ? "fp16" : "bf16";  // both dtypes, once each
  const std::vector<Config> configs = covering_configs(limits, nullptr);
  ASSERT_FALSE(configs.empty());
  EXPECT_LE(configs.size(), 10u) << "keep the compile set small";
  // Two compiles at a time: the CI machine has two cores.
  std::vector<CompileResult> results(configs.size());
  for (std::size_t i = 0; i < configs.size(); i += 2) {
    auto second =
        i + 1 < configs.size()
            ? std::async(
                  std::launch::async,
                  [&, i] { return compile_kernel(request_for(configs[i + 1], dtype, limits)); })
            : std::future<CompileResult>();
    results[i] = compile_kernel(request_for(configs[i], dtype, limits));
    if (second.valid()) results[i + 1] = second.get();
  }
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const CompileResult& result = results[i];
    ASSERT_TRUE(result.ok) << describe(c) << "\n" << result.log;
    EXPECT_FALSE(result.cubin.empty()) << describe(c);
    const std::int64_t threads = c.at("WARPS_N") * c.at("WARPS_M") * c.at("WARPS_K") * 32;
    EXPECT_GT(result.resources.registers, 0) << describe(c) << "\n" << result.log;
    EXPECT_LE(result.resources.registers * threads, limits.regs_per_block) << describe(c);
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << describe(c) << "\n" << result.log;
    EXPECT_EQ(result.resources.spill_load_bytes, 0) << describe(c) << "\n" << result.log;
    EXPECT_EQ(result.resources.static_smem_bytes, 0) << "all shared memory is dynamic";
  }
}

INSTANTIATE_TEST_SUITE_P(HopperAndBlackwell, GemmSkinnyCompile,
                         ::testing::Values("sm_90a", "sm_100a"));

TEST(GemmSkinnyTemplate, ShapeAssumptionsAreStaticAsserts) {
  const DeviceLimits limits = limits_of("sm_90a");
  Config config = skinny_survivors(shape(64, 4096, 7168), limits).front().config;
  config["WARPS_K"] = 3;  // does not divide the k16 steps of a stage
  const CompileResult result = compile_kernel(request_for(config, "bf16", limits));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("(BK/16) % WARPS_K == 0"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace kt
