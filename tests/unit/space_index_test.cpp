// SpaceIndex (tuner/space_index.hpp): for any shape, the feasible configs it gives are exactly the
// ones the plan's enumeration keeps, in the same order, for every shipped family and arch, and
// asked for launches, each entry's is evaluate_launch's.
#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "tuner/space_index.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

std::vector<std::pair<std::string, Config>> enumerated(const Family& family, const Shape& shape,
                                                       const std::string& dtype,
                                                       const DeviceLimits& limits) {
  std::vector<std::pair<std::string, Config>> out;
  for (const VariantPlan& p : enumerate_variants(family, shape, dtype, limits))
    if (!p.unsupported_arch && !p.pruned_by) out.emplace_back(p.tmpl->name, p.config);
  return out;
}

std::vector<std::pair<std::string, Config>> indexed(const SpaceIndex& index, const Shape& shape) {
  std::vector<std::pair<std::string, Config>> out;
  for (const SpaceIndex::Entry& e : index.feasible(shape)) out.emplace_back(e.tmpl->name, e.config);
  return out;
}

struct Case {
  std::string family, dtype, arch;
  std::vector<Shape> shapes;
};

TEST(SpaceIndex, KeepsExactlyWhatThePlanKeepsOnOddTinyAndHugeShapes) {
  const std::vector<Case> cases{
      {"gemm",
       "bf16",
       "sm_90a",
       {{{"M", 4096}, {"N", 4096}, {"K", 4096}},
        {{"M", 1}, {"N", 4096}, {"K", 7168}},
        {{"M", 777}, {"N", 1531}, {"K", 4099}},
        {{"M", 3}, {"N", 5}, {"K", 7}},
        {{"M", 64}, {"N", 64}, {"K", 262144}}}},
      {"gemm", "fp16", "sm_100a", {{{"M", 128}, {"N", 256}, {"K", 512}}}},
      {"attention_fwd",
       "bf16",
       "sm_90a",
       {{{"B", 2}, {"H", 7}, {"S", 333}, {"D", 64}, {"CAUSAL", 1}},
        {{"B", 1}, {"H", 16}, {"S", 8192}, {"D", 128}, {"CAUSAL", 0}}}},
      {"dual_gemm_silu",
       "bf16",
       "sm_90a",
       {{{"G", 4}, {"M", 1}, {"N", 2048}, {"K", 4096}},
        {{"G", 2}, {"M", 77}, {"N", 1536}, {"K", 3008}}}},
      {"gemm_fp8",
       "e4m3",
       "sm_90a",
       {{{"M", 64}, {"N", 2112}, {"K", 7168}, {"BLOCK_SCALED", 1}},
        {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"BLOCK_SCALED", 0}}}},
  };
  for (const Case& c : cases) {
    const Family& family = test::shipped_family(c.family);
    const DeviceLimits limits = *limits_for_arch(c.arch);
    const SpaceIndex index(family, c.dtype, limits);
    EXPECT_LT(index.kept(), index.enumerated()) << c.family << ": nothing pruned up front";
    for (const Shape& shape : c.shapes) {
      const auto want = enumerated(family, shape, c.dtype, limits);
      const auto got = indexed(index, shape);
      EXPECT_FALSE(want.empty()) << c.family << " " << canonical_key(shape);
      EXPECT_EQ(got, want) << c.family << " " << c.dtype << " " << c.arch << " "
                           << canonical_key(shape);
      // With launches: the same entries, each with evaluate_launch's launch for the shape.
      const auto with_launch = index.feasible(shape, true);
      ASSERT_EQ(with_launch.size(), got.size());
      std::size_t launched = 0;
      for (const SpaceIndex::Entry& e : with_launch) {
        std::optional<LaunchDims> expected;
        try {
          expected = evaluate_launch(family, *e.tmpl, e.config, shape, c.dtype, limits);
        } catch (const std::exception&) {
        }
        ASSERT_EQ(e.launch.has_value(), expected.has_value())
            << c.family << " " << e.tmpl->name << " " << canonical_key(e.config);
        if (!expected) continue;
        ++launched;
        EXPECT_EQ(e.launch->grid, expected->grid) << e.tmpl->name << " " << canonical_key(e.config);
        EXPECT_EQ(e.launch->block, expected->block);
        EXPECT_EQ(e.launch->cluster, expected->cluster);
        EXPECT_EQ(e.launch->dynamic_smem, expected->dynamic_smem);
      }
      EXPECT_GT(launched, 0u) << c.family << " " << canonical_key(shape);
      EXPECT_TRUE(index.feasible(shape).front().launch == std::nullopt) << "only when asked";
    }
  }
}

}  // namespace
}  // namespace kt
