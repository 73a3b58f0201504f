// The fp8 GEMM family (kernel_templates/gemm_fp8, "wgmma_fp8_tma_ws"): its manifest keeps a
// usable space for both scaling modes on square and decode shapes, block scales only with the
// tiles the kernel applies them to, and a covering set of survivors (every value of every axis,
// e4m3 and e5m2 A, both scaling modes) compiles with NVRTC for sm_90a without spills; a variant
// that breaks a shape assumption fails to compile with the reason in the log; the reference
// kernel compiles for both dtypes. The Blackwell template (tcgen05 kind::f8f6f4, per-tensor
// scales) is recorded as unsupported on Hopper, has no variant for block scales, and a covering
// set of its survivors compiles for sm_100a without spills, with its TMEM columns reported.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

constexpr const char* kTemplate = "wgmma_fp8_tma_ws";

const Family& fp8_family() {
  return test::shipped_family("gemm_fp8");
}

DeviceLimits hopper() {
  return test::limits_with_sms("sm_90a", 132);
}

Shape shape(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t block_scaled) {
  return {{"M", m}, {"N", n}, {"K", k}, {"BLOCK_SCALED", block_scaled}};
}

std::vector<VariantPlan> survivors(const Shape& s, const std::string& dtype = "e4m3") {
  return test::survivors(fp8_family(), kTemplate, s, dtype, hopper());
}

std::int64_t axis(const VariantPlan& plan, const char* name) {
  return plan.config.at(name);
}

TEST(GemmFp8, FamilyTakesFp8InputsAndWritesBf16) {
  const Family& family = fp8_family();
  EXPECT_EQ(family.dtypes, (std::vector<std::string>{"e4m3", "e5m2"}));
  std::map<std::string, std::string> dtypes;
  for (const BufferSpec& b : family.buffers) dtypes[b.name] = b.dtype;
  EXPECT_EQ(dtypes["A"], "in");
  EXPECT_EQ(dtypes["B"], "e4m3");
  EXPECT_EQ(dtypes["C"], "bf16");
  for (const BufferSpec& b : family.buffers)
    if (b.name == "SA" || b.name == "SB") {
      EXPECT_GT(b.range_low, 0.0) << "scales are positive";
      EXPECT_GT(b.range_high, b.range_low);
    }
  const ProblemInstance problem = instantiate(fp8_family(), test::template_named(family, kTemplate),
                                              survivors(shape(256, 384, 512, 1)).front().config,
                                              shape(256, 384, 512, 1), "e5m2", hopper());
  for (const BufferInstance& b : problem.buffers) {
    if (b.name == "A") EXPECT_EQ(b.dtype, "e5m2");
    if (b.name == "SA") EXPECT_EQ(b.elements, 4 * 256) << "[cdiv(K,128)][M]";
    if (b.name == "SB") EXPECT_EQ(b.elements, 3 * 4) << "[cdiv(N,128)][cdiv(K,128)]";
  }
  EXPECT_EQ(problem.baseline->kind, "cublaslt_fp8_gemm");
  EXPECT_EQ(problem.baseline->params.at("block_scaled"), 1);
}

// CUDA caps a grid's y and z extents at 65535 blocks: the reference's 16-row tiles stride, and its
// launch stays within the caps at the largest M and N the family takes.
TEST(GemmFp8, TheReferenceLaunchFitsTheGridLimitsAtTheLargestShapes) {
  const Family& family = fp8_family();
  for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1048576, 6}, {6, 1048576}, {1048576, 1}, {67, 45}}) {
    const Shape s = shape(m, n, 16, 1);
    const auto plans = survivors(s);
    ASSERT_FALSE(plans.empty()) << m << "x" << n;
    const ProblemInstance problem = instantiate(family, test::template_named(family, kTemplate),
                                                plans.front().config, s, "e4m3", hopper());
    const nlohmann::json& grid = problem.reference.params.at("launch").at("grid");
    EXPECT_LE(grid[0].get<std::int64_t>(), 65535) << m << "x" << n;
    EXPECT_LE(grid[1].get<std::int64_t>(), 65535) << m << "x" << n;
    EXPECT_GE(grid[0].get<std::int64_t>() * 16, std::min<std::int64_t>(n, 65535 * 16));
    EXPECT_GE(grid[1].get<std::int64_t>() * 16, std::min<std::int64_t>(m, 65535 * 16));
  }
}

TEST(GemmFp8, BothScalingModesKeepAUsableSpace) {
  for (const std::int64_t block_scaled : {0, 1}) {
    const auto square = survivors(shape(4096, 4096, 4096, block_scaled));
    EXPECT_GE(square.size(), 20u) << "BLOCK_SCALED " << block_scaled;
    EXPECT_LE(square.size(), 3000u) << "BLOCK_SCALED " << block_scaled;
    bool persistent = false;
    for (const VariantPlan& plan : square) {
      EXPECT_EQ(axis(plan, "SCALING"), block_scaled);
      persistent |= axis(plan, "GRID") == 1;
      if (block_scaled == 1) {
        EXPECT_EQ(axis(plan, "BK"), 128) << "one scale block per k-tile";
        EXPECT_EQ(128 % axis(plan, "BN"), 0) << "one scale block of B per tile";
        EXPECT_EQ(axis(plan, "PROMOTE"), 1);
      }
    }
    EXPECT_TRUE(persistent);
    bool stream_k = false;
    for (const VariantPlan& plan : survivors(shape(64, 2112, 7168, block_scaled))) {
      EXPECT_LE(axis(plan, "BM"), 128) << "decode rows";
      stream_k |= axis(plan, "SPLIT_K") == 2;
    }
    EXPECT_TRUE(stream_k) << "33 tiles on 132 SMs need their k-iterations shared out";
  }
  EXPECT_TRUE(survivors(shape(4096, 4096, 4104, 0)).empty())
      << "K % 16 != 0: the row pitch is not a multiple of 16 bytes";
}

TEST(GemmFp8, SmokeShapeRunsEverySurvivor) {
  for (const std::int64_t block_scaled : {0, 1}) {
    const Shape big = shape(4096, 4096, 4096, block_scaled);
    const Shape smoke = smoke_shape_for(fp8_family(), big);
    EXPECT_EQ(smoke.at("BLOCK_SCALED"), block_scaled) << "the smoke check keeps the scaling mode";
    for (const VariantPlan& plan : survivors(big)) {
      const ProblemInstance problem =
          instantiate(fp8_family(), test::template_named(fp8_family(), kTemplate), plan.config,
                      smoke, "e4m3", hopper());
      for (const ArgInstance& arg : problem.args)
        if (arg.kind == ArgInstance::Kind::tensor_map && arg.buffer != "C") {
          EXPECT_EQ(arg.box[0], 128u) << "128 fp8 elements: the 128-byte swizzle span";
          EXPECT_EQ(arg.dims[0] % 16, 0) << "row pitch of " << arg.buffer;
        }
    }
  }
}

TEST(GemmFp8, CoveringSetCompilesForSm90aWithoutSpills) {
  const TemplateSpec& tmpl = test::template_named(fp8_family(), kTemplate);
  std::vector<VariantPlan> plans;
  for (const Shape& s : {shape(4096, 4096, 4096, 0), shape(4096, 4096, 4096, 1),
                         shape(64, 2112, 7168, 0), shape(64, 2112, 7168, 1)})
    for (VariantPlan& plan : survivors(s)) plans.push_back(std::move(plan));
  const auto chosen = test::covering_set(plans);
  ASSERT_GE(chosen.size(), 2u);
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string dtype = i % 2 == 0 ? "e4m3" : "e5m2";
    const CompileResult result =
        test::compile_variant(fp8_family(), tmpl, chosen[i].config, dtype, hopper());
    ASSERT_TRUE(result.ok) << canonical_key(chosen[i].config) << "\n" << result.log;
    test::expect_clean_wgmma_compile(result, canonical_key(chosen[i].config));
    for (const auto& [name, value] : chosen[i].config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmFp8, ShapeAssumptionsAreStaticAsserts) {
  const TemplateSpec& tmpl = test::template_named(fp8_family(), kTemplate);
  Config config = survivors(shape(4096, 4096, 4096, 1)).front().config;
  config["BN"] = 256;  // block scales: a tile would span two scale blocks of B
  const CompileResult result = test::compile_variant(fp8_family(), tmpl, config, "e4m3", hopper());
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("BN dividing 128"), std::string::npos) << result.log;
}

TEST(GemmFp8, BlackwellTemplateCompilesForSm100aAndNeverRunsOnHopper) {
  constexpr const char* kBlackwell = "tcgen05_fp8_tma_ws";
  const TemplateSpec& tmpl = test::template_named(fp8_family(), kBlackwell);
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_100a"});
  EXPECT_EQ(tmpl.resources.at("tmem_columns"), "TMEM_COLS");
  for (const VariantPlan& plan :
       enumerate_variants(fp8_family(), shape(4096, 4096, 4096, 0), "e4m3", hopper()))
    if (plan.tmpl->name == kBlackwell) {
      EXPECT_TRUE(plan.unsupported_arch);
    }
  const DeviceLimits blackwell = test::limits_with_sms("sm_100a", 148);
  EXPECT_TRUE(
      test::survivors(fp8_family(), kBlackwell, shape(4096, 4096, 4096, 1), "e4m3", blackwell)
          .empty())
      << "block scales have no Blackwell variant";
  std::vector<VariantPlan> pool;
  for (const Shape& s : {shape(4096, 4096, 4096, 0), shape(256, 2048, 4096, 0)})
    for (VariantPlan& plan : test::survivors(fp8_family(), kBlackwell, s, "e4m3", blackwell))
      pool.push_back(std::move(plan));
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 12u) << "keep the CPU test short";
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const std::string dtype = i % 2 == 0 ? "e4m3" : "e5m2";
    const std::string what = canonical_key(chosen[i].config) + " " + dtype;
    const CompileResult result =
        test::compile_variant(fp8_family(), tmpl, chosen[i].config, dtype, blackwell);
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.stack_frame_bytes, 0) << what << "\n" << result.log;
    const auto resources = template_resources(fp8_family(), tmpl, chosen[i].config,
                                              shape(4096, 4096, 4096, 0), dtype, blackwell);
    EXPECT_EQ(resources.at("tmem_columns"), chosen[i].config.at("TMEM_COLS"));
  }
}

TEST(GemmFp8, ReferenceCompilesForBothInputDtypes) {
  for (const char* dtype : {"e4m3", "e5m2"}) {
    const CompileResult result =
        compile_kernel(reference_compile_request(fp8_family(), dtype, hopper()));
    ASSERT_TRUE(result.ok) << dtype << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0);
  }
}

}  // namespace
}  // namespace kt
