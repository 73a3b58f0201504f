// What the searchers are told of a job's launches (tuner/search/launch_facts.cpp): grids evaluated
// as the engine launches them, the memory-bound rule, and which candidates fill one wave.
#include "tuner/search/launch_facts.hpp"

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/tile_launch_family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

Family tile_family() {
  return test::tile_launch_family("tiles", "tile");
}

DeviceLimits hopper() {
  return limits_for_arch("sm_90a").value();  // 132 SMs, 228 KiB of shared memory per SM
}

TEST(LaunchFacts, GridBlocksAndBlocksPerSmComeFromTheLaunchFormulas) {
  const Family family = tile_family();
  const Shape shape{{"M", 64}, {"N", 4096}, {"K", 7168}};
  // 64 x 2 blocks; 8 x 96 x 64 x 2 bytes = 96 KiB (+1 KiB reserved): two per SM.
  GridFacts g =
      grid_facts(family, "tile", {{"BM", 32}, {"BN", 64}, {"STAGES", 8}}, shape, "bf16", hopper());
  EXPECT_EQ(g.blocks, 128);
  EXPECT_EQ(g.blocks_per_sm, 2);
  // Small footprint: 128-thread blocks, 2048 threads per SM, so the threads bound it at 16.
  g = grid_facts(family, "tile", {{"BM", 16}, {"BN", 16}, {"STAGES", 1}}, shape, "bf16", hopper());
  EXPECT_EQ(g.blocks, 256 * 4);
  EXPECT_EQ(g.blocks_per_sm, 16);
  // A config missing an axis the formulas use, or an unknown template: nothing known.
  EXPECT_EQ(grid_facts(family, "tile", {{"BM", 32}}, shape, "bf16", hopper()).blocks, 0);
  EXPECT_EQ(
      grid_facts(family, "gone", {{"BM", 32}, {"BN", 64}, {"STAGES", 6}}, shape, "bf16", hopper())
          .blocks,
      0);
}

// The engine launches what instantiate() evaluates; the searchers must see the same grid.
TEST(LaunchFacts, GridBlocksAgreeWithTheEnginesLaunchForTheShippedGemmTemplates) {
  const Family& family = test::gemm_family();
  const DeviceLimits limits = test::gemm_limits("sm_90a");
  const Shape shape = test::gemm_shape(64, 4096, 7168);
  std::size_t checked = 0, one_wave = 0;
  const SearchProblem problem = search_problem(family, shape, "bf16", limits);
  ASSERT_TRUE(problem.memory_bound);
  std::size_t index = 0;
  for (const VariantPlan& plan : enumerate_variants(family, shape, "bf16", limits)) {
    if (plan.pruned_by || index++ % 5 != 0) continue;  // a fifth of the survivors is plenty
    const ProblemInstance launch =
        instantiate(family, *plan.tmpl, plan.config, shape, "bf16", limits);
    const GridFacts g = grid_facts(family, plan.tmpl->name, plan.config, shape, "bf16", limits);
    EXPECT_EQ(g.blocks,
              std::int64_t{launch.launch.grid[0]} * launch.launch.grid[1] * launch.launch.grid[2])
        << plan.tmpl->name << " " << canonical_key(plan.config);
    EXPECT_GE(g.blocks_per_sm, 1);
    SearchCandidate c{plan.tmpl->name, plan.config, {}, g.blocks, g.blocks_per_sm};
    one_wave += fills_one_wave(c, problem) ? 1 : 0;
    ++checked;
  }
  EXPECT_GT(checked, 50u);
  EXPECT_GT(one_wave, 0u) << "the decode shape has one-wave configs (bench/experiments/one_wave/)";
  EXPECT_LT(one_wave, checked);
}

TEST(LaunchFacts, MemoryBoundIsArithmeticIntensityBelowTheArchsBalance) {
  const Family family = tile_family();
  const auto problem = [&](std::int64_t m, std::int64_t n, std::int64_t k, const char* arch) {
    return search_problem(family, {{"M", m}, {"N", n}, {"K", k}}, "bf16",
                          limits_for_arch(arch).value());
  };
  EXPECT_TRUE(problem(1, 4096, 7168, "sm_90a").memory_bound);    // 1 FLOP/byte
  EXPECT_TRUE(problem(128, 4096, 7168, "sm_90a").memory_bound);  // 122
  EXPECT_FALSE(problem(4096, 4096, 4096, "sm_90a").memory_bound);
  // 221 FLOP/byte: above Hopper's lowest balance (200), below Blackwell's (281).
  EXPECT_FALSE(problem(256, 7168, 2048, "sm_90a").memory_bound);
  EXPECT_TRUE(problem(256, 7168, 2048, "sm_100a").memory_bound);
  // No balance recorded for the arch: never memory-bound, the search as before.
  EXPECT_FALSE(problem(1, 4096, 7168, "sm_86").memory_bound);
  EXPECT_EQ(problem(1, 4096, 7168, "sm_90a").sm_count, 132);
  EXPECT_TRUE(prefers_one_wave(problem(64, 4096, 7168, "sm_90a")));
  EXPECT_TRUE(problem(8, 128256, 4096, "sm_90a").memory_bound);
  EXPECT_FALSE(prefers_one_wave(problem(8, 128256, 4096, "sm_90a"))) << "1 GB of weights";

  Family no_flops = family;
  no_flops.flops = "0";
  EXPECT_FALSE(search_problem(no_flops, {{"M", 1}, {"N", 4096}, {"K", 7168}}, "bf16", hopper())
                   .memory_bound);
}

TEST(LaunchFacts, OneWaveIsTheWholeGridResidentOnAtLeastThreeQuartersOfTheSms) {
  const SearchProblem problem{132, true};
  const auto with = [](std::int64_t blocks, int per_sm) {
    return SearchCandidate{"t", {}, {}, blocks, per_sm};
  };
  EXPECT_FALSE(fills_one_wave(with(98, 1), problem));  // a quarter of the SMs idle
  EXPECT_TRUE(fills_one_wave(with(99, 1), problem));
  EXPECT_TRUE(fills_one_wave(with(132, 1), problem));
  EXPECT_FALSE(fills_one_wave(with(133, 1), problem));  // one block waits for a second wave
  EXPECT_TRUE(fills_one_wave(with(264, 2), problem));   // two resident per SM
  EXPECT_FALSE(fills_one_wave(with(265, 2), problem));
  EXPECT_FALSE(fills_one_wave(with(0, 0), problem)) << "grid unknown";
  EXPECT_FALSE(fills_one_wave(with(128, 1), SearchProblem{0, true})) << "SM count unknown";
}

TEST(LaunchFacts, OneWaveFirstReordersOnlyOnAMemoryBoundShape) {
  const std::vector<SearchCandidate> candidates{
      {"t", {}, {}, 300, 1}, {"t", {}, {}, 128, 1}, {"t", {}, {}, 0, 0}, {"t", {}, {}, 120, 1}};
  const std::vector<SearchObservation> none;
  const std::vector<bool> taken(candidates.size(), false);
  const std::vector<std::size_t> order{2, 0, 3, 1};
  EXPECT_EQ(one_wave_first(order, {candidates, none, taken, SearchProblem{132, true}}),
            (std::vector<std::size_t>{3, 1, 2, 0}));
  EXPECT_EQ(one_wave_first(order, {candidates, none, taken, SearchProblem{132, false}}), order);
  EXPECT_EQ(one_wave_first(order, {candidates, none, taken, SearchProblem{132, true, 1e9}}), order)
      << "a gigabyte of operands: many waves, the tail costs little";
  EXPECT_EQ(one_wave_first(order, {candidates, none, taken, SearchProblem{132, true, 60e6}}),
            (std::vector<std::size_t>{3, 1, 2, 0}));
  EXPECT_EQ(one_wave_first(order, {candidates, none, taken}), order);
}

TEST(LaunchFacts, DeeperRingsFirstOnlyWhereOneWaveIsPreferred) {
  std::vector<SearchCandidate> candidates(4);
  const std::int64_t smem[] = {96 << 10, 192 << 10, 0, 192 << 10};
  for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].dynamic_smem = smem[i];
  const std::vector<SearchObservation> none;
  const std::vector<bool> taken(candidates.size(), false);
  const std::vector<std::size_t> order{2, 3, 0, 1};
  EXPECT_EQ(deeper_rings_first(order, {candidates, none, taken, SearchProblem{132, true, 60e6}}),
            (std::vector<std::size_t>{3, 1, 0, 2}))
      << "largest ring first, ties in their order";
  EXPECT_EQ(deeper_rings_first(order, {candidates, none, taken, SearchProblem{132, false}}), order);
  EXPECT_EQ(deeper_rings_first(order, {candidates, none, taken, SearchProblem{132, true, 1e9}}),
            order);
}

}  // namespace
}  // namespace kt
