// The NVFP4 GEMM family (kernel_templates/gemm_nvfp4, "tcgen05_nvfp4_tma_ws", Blackwell only, not
// validated on hardware): the manifest loads with its packed e2m1 and ue4m3 buffers, refuses K
// that the copy engine or the 16-element scale blocks cannot take, prunes its space as intended
// (whole scale atoms of B, TMEM holding accumulators and scale columns, deep stages only for long
// K, pairs only for M > 128), is never planned on Hopper, and a covering set of survivors compiles
// with NVRTC for sm_100a without spills, reporting registers, shared memory and TMEM columns; the
// reference kernel compiles; a variant breaking a shape assumption fails with its reason.
#include <iostream>
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

constexpr const char* kTemplate = "tcgen05_nvfp4_tma_ws";

const Family& nvfp4_family() {
  return test::shipped_family("gemm_nvfp4");
}

DeviceLimits blackwell() {
  return test::limits_with_sms("sm_100a", 148);
}

Shape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}

std::vector<VariantPlan> survivors(const Shape& s) {
  return test::survivors(nvfp4_family(), kTemplate, s, "nvfp4", blackwell());
}

std::int64_t axis(const VariantPlan& plan, const char* name) {
  return plan.config.at(name);
}

TEST(GemmNvfp4, ManifestDeclaresPackedOperandsScalesAndNoValidation) {
  const Family& family = nvfp4_family();
  EXPECT_EQ(family.dtypes, std::vector<std::string>{"nvfp4"});
  std::map<std::string, std::string> dtypes;
  for (const BufferSpec& b : family.buffers) dtypes[b.name] = b.dtype;
  EXPECT_EQ(dtypes["A"], "e2m1x2");
  EXPECT_EQ(dtypes["B"], "e2m1x2");
  EXPECT_EQ(dtypes["SFA"], "ue4m3");
  EXPECT_EQ(dtypes["SFB"], "ue4m3");
  EXPECT_EQ(dtypes["C"], "bf16");
  EXPECT_EQ(dtype_bytes("e2m1x2"), 1);
  EXPECT_EQ(dtype_bytes("ue4m3"), 1);
  const TemplateSpec& tmpl = test::template_named(family, kTemplate);
  EXPECT_EQ(tmpl.archs, std::vector<std::string>{"sm_100a"});
  const auto& listed = family.manifest.at("templates").at(0);
  ASSERT_EQ(listed.at("name"), kTemplate);
  EXPECT_TRUE(listed.at("validated_on").empty()) << "no GPU of ours has run it";
  EXPECT_EQ(tmpl.resources.at("tmem_columns"), "TMEM_COLS");
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->kind, "external") << "no in-process NVFP4 baseline exists";
  EXPECT_FALSE(has_speedup_baseline(family));

  // 2 bytes per 4 elements of A and B; one atom of 512 factors per 128 rows x 64 k.
  const Shape s = shape(300, 200, 4160);
  const ProblemInstance problem =
      instantiate(family, tmpl, survivors(s).front().config, s, "nvfp4", blackwell());
  for (const BufferInstance& b : problem.buffers) {
    if (b.name == "A") EXPECT_EQ(b.elements, 300 * 4160 / 2);
    if (b.name == "B") EXPECT_EQ(b.elements, 200 * 4160 / 2);
    if (b.name == "SFA") EXPECT_EQ(b.elements, 3 * 65 * 512) << "cdiv(M,128) x cdiv(K,64) atoms";
    if (b.name == "SFB") EXPECT_EQ(b.elements, 2 * 65 * 512);
  }
  int maps = 0;
  for (const ArgInstance& arg : problem.args) {
    if (arg.kind != ArgInstance::Kind::tensor_map) continue;
    ++maps;
    if (arg.buffer == "A" || arg.buffer == "B") {
      EXPECT_EQ(arg.dims[0], 4160 / 2) << "bytes of a row";
      EXPECT_EQ(arg.box[0], 128u) << "the 128-byte swizzle span";
    } else {
      EXPECT_EQ(arg.dims[0] * arg.dims[1] * arg.dims[2], (arg.buffer == "SFA" ? 3 : 2) * 65 * 512)
          << arg.buffer << ": the map covers its atoms exactly";
      EXPECT_EQ(arg.swizzle, 0u);
    }
  }
  EXPECT_EQ(maps, 4);
}

TEST(GemmNvfp4, ShapesTheKernelCannotTakeAreRefused) {
  const Family& family = nvfp4_family();
  EXPECT_FALSE(validate_shape(family, shape(4096, 4096, 4096), "nvfp4").has_value());
  EXPECT_FALSE(validate_shape(family, shape(1, 1, 32), "nvfp4").has_value());
  for (const std::int64_t k : {16, 48, 4100}) {
    const auto error = validate_shape(family, shape(256, 256, k), "nvfp4");
    ASSERT_TRUE(error.has_value()) << "K " << k;
    EXPECT_NE(error->find("K"), std::string::npos) << *error;
  }
  EXPECT_TRUE(validate_shape(family, shape(65536, 65536, 65536), "nvfp4").has_value())
      << "M*K/2 >= 2^31";
}

TEST(GemmNvfp4, SpacePrunesAsIntended) {
  const auto square = survivors(shape(4096, 4096, 4096));
  EXPECT_GE(square.size(), 10u);
  EXPECT_LE(square.size(), 3000u);
  bool pair = false, deep = false;
  for (const VariantPlan& plan : square) {
    const std::int64_t bn = axis(plan, "BN"), bk = axis(plan, "BK");
    EXPECT_EQ(bn % 128, 0) << "whole 128-row scale atoms of B";
    const std::int64_t columns = axis(plan, "ACC_STAGES") * bn + bk / 16 * (1 + bn / 128);
    EXPECT_LE(columns, axis(plan, "TMEM_COLS"));
    EXPECT_LT(axis(plan, "TMEM_COLS"), 2 * columns) << "the smallest power of two";
    pair |= axis(plan, "CTA_GROUP") == 2;
    deep |= bk == 512;
  }
  EXPECT_TRUE(pair);
  EXPECT_TRUE(deep);

  // Tiny and odd: no CTA pair (M <= 128), no 256-wide B tile (N <= 128), no 512-deep stage.
  const auto tiny = survivors(shape(67, 45, 224));
  ASSERT_FALSE(tiny.empty());
  for (const VariantPlan& plan : tiny) {
    EXPECT_EQ(axis(plan, "CTA_GROUP"), 1);
    EXPECT_EQ(axis(plan, "BN"), 128);
    EXPECT_EQ(axis(plan, "BK"), 256);
    EXPECT_LE(axis(plan, "STAGES"), 3) << "more stages than k-tiles";
  }
  // Huge K keeps the deep stages and persistent grids.
  bool persistent = false;
  for (const VariantPlan& plan : survivors(shape(4096, 4096, 262144)))
    persistent |= axis(plan, "GRID") == 1 && axis(plan, "BK") == 512;
  EXPECT_TRUE(persistent);
  EXPECT_TRUE(survivors(shape(4096, 4096, 4112)).empty()) << "K % 32 != 0";
}

TEST(GemmNvfp4, NeverPlannedOnHopper) {
  const auto plans = enumerate_variants(nvfp4_family(), shape(4096, 4096, 4096), "nvfp4",
                                        test::limits_with_sms("sm_90a", 132));
  ASSERT_FALSE(plans.empty());
  for (const VariantPlan& plan : plans) EXPECT_TRUE(plan.unsupported_arch);
}

TEST(GemmNvfp4, CoveringSetCompilesForSm100aWithResources) {
  const TemplateSpec& tmpl = test::template_named(nvfp4_family(), kTemplate);
  std::vector<VariantPlan> pool;
  for (const Shape& s : {shape(4096, 4096, 4096), shape(256, 2048, 8192), shape(67, 45, 224)})
    for (VariantPlan& plan : survivors(s)) pool.push_back(std::move(plan));
  const auto chosen = test::covering_set(pool);
  ASSERT_GE(chosen.size(), 2u);
  EXPECT_LE(chosen.size(), 12u) << "keep the CPU test short";
  std::map<std::string, std::set<std::int64_t>> compiled;
  for (const VariantPlan& plan : chosen) {
    const std::string what = canonical_key(plan.config);
    const CompileResult result =
        test::compile_variant(nvfp4_family(), tmpl, plan.config, "nvfp4", blackwell());
    ASSERT_TRUE(result.ok) << what << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << result.log;
    EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.resources.stack_frame_bytes, 0) << what << "\n" << result.log;
    const auto resources = template_resources(nvfp4_family(), tmpl, plan.config,
                                              shape(4096, 4096, 4096), "nvfp4", blackwell());
    EXPECT_EQ(resources.at("tmem_columns"), plan.config.at("TMEM_COLS"));
    std::cout << "[ resources ] " << what << ": " << result.resources.registers
              << " registers, TMEM " << resources.at("tmem_columns") << " columns, dynamic smem "
              << evaluate_launch(nvfp4_family(), tmpl, plan.config, shape(4096, 4096, 4096),
                                 "nvfp4", blackwell())
                     .dynamic_smem
              << " B\n";
    for (const auto& [name, value] : plan.config) compiled[name].insert(value);
  }
  for (const AxisSpec& spec : tmpl.axes)
    EXPECT_EQ(compiled[spec.name].size(), spec.values.size()) << "axis " << spec.name;
}

TEST(GemmNvfp4, ShapeAssumptionsAreStaticAsserts) {
  const TemplateSpec& tmpl = test::template_named(nvfp4_family(), kTemplate);
  Config config = survivors(shape(4096, 4096, 4096)).front().config;
  config["BN"] = 64;  // half a scale atom of B
  const CompileResult result =
      test::compile_variant(nvfp4_family(), tmpl, config, "nvfp4", blackwell());
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("BN % 128 == 0"), std::string::npos) << result.log;
}

TEST(GemmNvfp4, ReferenceCompilesForHopperAndBlackwell) {
  for (const DeviceLimits& limits : {test::limits_with_sms("sm_90a", 132), blackwell()}) {
    const CompileResult result =
        compile_kernel(reference_compile_request(nvfp4_family(), "nvfp4", limits));
    ASSERT_TRUE(result.ok) << limits.arch << "\n" << result.log;
    EXPECT_GT(result.resources.registers, 0);
  }
}

}  // namespace
}  // namespace kt
