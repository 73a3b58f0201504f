#include "tuner/variant_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "support/shipped_family.hpp"
#include "support/test_family.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

class VariantSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_tiny_family(dir_.path() / "tiny", test::tiny_family_manifest());
    family_ = load_family(dir_.path() / "tiny");
  }

  static DeviceLimits limits(const std::string& arch) { return limits_for_arch(arch).value(); }

  std::vector<VariantPlan> plans(const std::string& arch, const std::string& dtype = "bf16") const {
    return enumerate_variants(family_, shape_, dtype, limits(arch));
  }

  const TemplateSpec& simple() const { return family_.templates[0]; }

  test::TempDir dir_;
  Family family_;
  Shape shape_{{"M", 1000}, {"N", 3}};
};

TEST_F(VariantSpaceTest, CountsFollowTheArchsAxesApplyTo) {
  // sm_90a: TILE(3) x SPLIT(2) x CLUSTER(2) of "simple", plus "blackwell_only" once, unsupported.
  const auto hopper = plans("sm_90a");
  ASSERT_EQ(hopper.size(), 13u);
  EXPECT_TRUE(hopper.back().unsupported_arch);
  EXPECT_EQ(hopper.back().tmpl, &family_.templates[1]);
  EXPECT_TRUE(hopper.back().config.empty());
  ASSERT_TRUE(hopper.back().pruned_by.has_value());
  EXPECT_NE(hopper.back().pruned_by->find("sm_100a"), std::string::npos);

  // sm_80: CLUSTER is absent, so 3 x 2, and no config names it.
  const auto ampere = plans("sm_80");
  ASSERT_EQ(ampere.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ampere[i].config.size(), 2u);
    EXPECT_FALSE(ampere[i].config.count("CLUSTER"));
    EXPECT_FALSE(ampere[i].unsupported_arch);
  }

  // sm_100a: both templates apply.
  const auto blackwell = plans("sm_100a");
  ASSERT_EQ(blackwell.size(), 13u);
  EXPECT_FALSE(blackwell.back().unsupported_arch);
  EXPECT_EQ(blackwell.back().config, (Config{{"TILE", 256}, {"SPLIT", 1}}));

  // A template's archs list rules out unknown GPUs entirely.
  const auto turing = plans("sm_75");
  ASSERT_EQ(turing.size(), 2u);
  EXPECT_TRUE(turing[0].unsupported_arch && turing[1].unsupported_arch);
}

TEST_F(VariantSpaceTest, FirstAxisInManifestOrderVariesSlowest) {
  const auto hopper = plans("sm_90a");
  // Manifest order is TILE, SPLIT, CLUSTER (not alphabetical).
  const std::vector<Config> expected_first = {{{"TILE", 32}, {"SPLIT", 1}, {"CLUSTER", 1}},
                                              {{"TILE", 32}, {"SPLIT", 1}, {"CLUSTER", 2}},
                                              {{"TILE", 32}, {"SPLIT", 2}, {"CLUSTER", 1}},
                                              {{"TILE", 32}, {"SPLIT", 2}, {"CLUSTER", 2}},
                                              {{"TILE", 64}, {"SPLIT", 1}, {"CLUSTER", 1}}};
  for (std::size_t i = 0; i < expected_first.size(); ++i)
    EXPECT_EQ(hopper[i].config, expected_first[i]) << i;
  EXPECT_EQ(hopper[11].config, (Config{{"TILE", 128}, {"SPLIT", 2}, {"CLUSTER", 2}}));
  // Stable: the same inputs give the same order.
  const auto again = plans("sm_90a");
  for (std::size_t i = 0; i < hopper.size(); ++i) EXPECT_EQ(hopper[i].config, again[i].config);
}

TEST_F(VariantSpaceTest, PrunedByNamesTheFirstFailingConstraint) {
  const auto hopper = plans("sm_90a");
  std::size_t pruned = 0;
  for (const VariantPlan& plan : hopper) {
    if (plan.unsupported_arch) continue;
    const auto tile = plan.config.at("TILE");
    const auto split = plan.config.at("SPLIT");
    if (tile * split > 128) {
      // Fails both constraints; the first one listed is reported.
      EXPECT_EQ(plan.pruned_by, "TILE*SPLIT <= 128");
    } else if (tile * 2 * 1024 > 227 * 1024) {
      EXPECT_EQ(plan.pruned_by, "TILE*elem_bytes*1024 <= smem_optin");
    } else {
      EXPECT_FALSE(plan.pruned_by.has_value()) << canonical_key(plan.config);
    }
    pruned += plan.pruned_by.has_value();
  }
  EXPECT_EQ(pruned, 4u);  // TILE=128 with every SPLIT x CLUSTER

  // Constraints see the device limits: with a smaller opt-in limit TILE=64 goes too.
  DeviceLimits small = limits("sm_90a");
  small.smem_optin = 100 * 1024;
  std::size_t pruned_small = 0;
  for (const VariantPlan& plan : enumerate_variants(family_, shape_, "bf16", small))
    pruned_small += plan.pruned_by.has_value() && !plan.unsupported_arch;
  EXPECT_EQ(pruned_small, 8u);
}

TEST_F(VariantSpaceTest, ConstraintThatCannotBeEvaluatedPrunesWithTheReason) {
  family_.templates[0].constraints = {"N % (TILE - 32) == 0"};  // remainder by zero at TILE=32
  const auto hopper = plans("sm_90a");
  ASSERT_TRUE(hopper[0].pruned_by.has_value());
  EXPECT_NE(hopper[0].pruned_by->find("remainder by zero"), std::string::npos)
      << *hopper[0].pruned_by;
}

TEST_F(VariantSpaceTest, TemplateWithoutAxesHasOneVariant) {
  family_.templates[1].axes.clear();
  family_.templates[1].archs.clear();
  const auto hopper = plans("sm_90a");
  ASSERT_EQ(hopper.size(), 13u);
  EXPECT_FALSE(hopper.back().unsupported_arch);
  EXPECT_TRUE(hopper.back().config.empty());
}

TEST_F(VariantSpaceTest, MakeBindingsHoldsDimsAxesElemBytesAndLimits) {
  const Bindings b = make_bindings(shape_, {{"TILE", 64}}, "fp16", limits("sm_100a"));
  EXPECT_EQ(b.at("M"), 1000);
  EXPECT_EQ(b.at("TILE"), 64);
  EXPECT_EQ(b.at("elem_bytes"), 2);
  EXPECT_EQ(b.at("smem_optin"), 227 * 1024);
  EXPECT_EQ(b.at("sm"), 100);
  EXPECT_EQ(b.at("tmem_columns"), 512);
  EXPECT_EQ(b.at("sm_count"), 148);  // no device probed: the arch table's B200
  for (const char* name : {"smem_per_sm", "max_threads", "regs_per_block", "max_regs_per_thread",
                           "max_cluster", "l2_bytes"})
    EXPECT_TRUE(b.count(name)) << name;
  EXPECT_EQ(make_bindings({}, {}, "f32", {}).at("elem_bytes"), 4);
}

TEST_F(VariantSpaceTest, VariantDefinesFollowAxisOrderThenDtypeSmAndOptions) {
  const Config config{{"TILE", 64}, {"SPLIT", 2}, {"CLUSTER", 1}};
  EXPECT_EQ(variant_defines(simple(), config, "bf16", limits("sm_90a")),
            (std::vector<std::string>{"-DKT_TILE=64", "-DKT_SPLIT=2", "-DKT_CLUSTER=1",
                                      "-DKT_DTYPE_BF16", "-DKT_SM=90", "-lineinfo"}));
  // Absent arch-restricted axes pass no define.
  EXPECT_EQ(variant_defines(simple(), {{"TILE", 32}, {"SPLIT", 1}}, "fp16", limits("sm_80")),
            (std::vector<std::string>{"-DKT_TILE=32", "-DKT_SPLIT=1", "-DKT_DTYPE_FP16",
                                      "-DKT_SM=80", "-lineinfo"}));
  EXPECT_THROW(variant_defines(simple(), {{"BOGUS", 1}}, "bf16", limits("sm_90a")), FamilyError);
}

TEST_F(VariantSpaceTest, CompileRequestCarriesTheTemplateSourceHeadersArchAndDefines) {
  const Config config{{"TILE", 64}, {"SPLIT", 2}, {"CLUSTER", 1}};
  const CompileRequest request =
      compile_request(family_, simple(), config, "bf16", limits("sm_90a"));
  EXPECT_EQ(request.source_name, simple().source);
  ASSERT_FALSE(request.source.empty());
  bool found = false;
  for (const auto& [name, text] : family_.sources)
    if (name == simple().source) found = text == request.source;
  EXPECT_TRUE(found) << "the template's own source text";
  EXPECT_EQ(request.headers, family_.sources);
  EXPECT_EQ(request.kernel, simple().kernel);
  EXPECT_EQ(request.arch, "sm_90a");
  EXPECT_EQ(request.options, variant_defines(simple(), config, "bf16", limits("sm_90a")));
}

TEST_F(VariantSpaceTest, InstantiateEvaluatesEveryPart) {
  const Config config{{"TILE", 64}, {"SPLIT", 2}, {"CLUSTER", 1}};
  const ProblemInstance p =
      instantiate(family_, simple(), config, shape_, "fp16", limits("sm_90a"));
  EXPECT_EQ(p.shape, shape_);
  EXPECT_EQ(p.dtype, "fp16");
  ASSERT_EQ(p.buffers.size(), 3u);
  EXPECT_EQ(p.buffers[0].name, "X");
  EXPECT_EQ(p.buffers[0].dtype, "fp16");  // "in" resolved to the job's dtype
  EXPECT_EQ(p.buffers[0].elements, 3000);
  EXPECT_EQ(p.buffers[1].role, "output");
  EXPECT_EQ(p.buffers[2].dtype, "f32");
  EXPECT_EQ(p.buffers[2].elements, 2000);  // SPLIT > 1 ? M*SPLIT : 1

  ASSERT_EQ(p.args.size(), 5u);
  EXPECT_EQ(p.args[0].kind, ArgInstance::Kind::buffer);
  EXPECT_EQ(p.args[0].buffer, "Y");
  EXPECT_EQ(p.args[2].kind, ArgInstance::Kind::i32);
  EXPECT_EQ(p.args[2].value, 1000);
  EXPECT_EQ(p.args[3].kind, ArgInstance::Kind::i64);
  EXPECT_EQ(p.args[3].value, 3000);
  EXPECT_EQ(p.args[4].kind, ArgInstance::Kind::f32);
  EXPECT_DOUBLE_EQ(p.args[4].value, 0.5);

  EXPECT_EQ(p.launch.grid, (std::array<std::uint32_t, 3>{16, 3, 2}));  // cdiv(1000, 64) = 16
  EXPECT_EQ(p.launch.block, (std::array<std::uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(p.launch.cluster, (std::array<std::uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(p.launch.dynamic_smem, 128u);

  EXPECT_EQ(p.reference.kind, "cublas_gemm");
  EXPECT_EQ(p.reference.params.at("a"), "X");  // buffer names stay names
  EXPECT_EQ(p.reference.params.at("c"), "Y");
  EXPECT_EQ(p.reference.params.at("m"), 1000);  // expressions become integers
  EXPECT_EQ(p.reference.params.at("n"), 3);
  EXPECT_EQ(p.reference.params.at("k"), 1);
  EXPECT_EQ(p.reference.params.at("transposed"), false);
  EXPECT_DOUBLE_EQ(p.flops, 3000);
  EXPECT_DOUBLE_EQ(p.bytes, 2 * 3000 * 2);
}

TEST_F(VariantSpaceTest, InstantiateRejectsLaunchValuesOutOfRange) {
  const Config config{{"TILE", 64}, {"SPLIT", 1}, {"CLUSTER", 1}};
  const auto expect_error = [&](const std::string& part) {
    try {
      instantiate(family_, family_.templates[0], config, shape_, "bf16", limits("sm_90a"));
      ADD_FAILURE() << "expected an error mentioning " << part;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("template 'simple'"), std::string::npos) << e.what();
    }
  };
  family_.templates[0].launch.block[0] = "TILE - 64";  // zero threads
  expect_error("launch.block[0]");
  family_.templates[0].launch.block[0] = "TILE";
  family_.templates[0].launch.grid[1] = "2^32";  // beyond uint32
  expect_error("launch.grid[1]");
  family_.templates[0].launch.grid[1] = "N";
  family_.templates[0].launch.cluster[2] = "TILE / 3";  // not an integer
  expect_error("launch.cluster[2]");
  family_.templates[0].launch.cluster[2] = "1";
  family_.templates[0].launch.dynamic_smem = "-1";
  expect_error("launch.dynamic_smem");
  family_.templates[0].launch.dynamic_smem = "0";
  family_.args[2].value = "2^31";  // does not fit an i32
  expect_error("args[2]");
  family_.args[2].value = "M";
  family_.buffers[0].elements = "M - 1000";  // empty buffer
  expect_error("buffer X elements");
}

TEST_F(VariantSpaceTest, InstantiateEvaluatesTensorMapArgs) {
  const Config config{{"TILE", 64}, {"SPLIT", 1}, {"CLUSTER", 1}};
  ArgSpec map;
  map.kind = ArgSpec::Kind::tensor_map;
  map.value = "X";
  map.dims = {"N", "M"};
  map.box = {"N", "TILE/2"};
  map.swizzle = "TILE";
  family_.templates[0].args = {family_.args[0], map};
  const ProblemInstance p =
      instantiate(family_, family_.templates[0], config, shape_, "bf16", limits("sm_90a"));
  ASSERT_EQ(p.args.size(), 2u);
  EXPECT_EQ(p.args[1].kind, ArgInstance::Kind::tensor_map);
  EXPECT_EQ(p.args[1].buffer, "X");
  EXPECT_EQ(p.args[1].dims, (std::vector<std::int64_t>{3, 1000}));
  EXPECT_EQ(p.args[1].box, (std::vector<std::uint32_t>{3, 32}));
  EXPECT_EQ(p.args[1].swizzle, 64u);

  const auto expect_error = [&](const std::string& part) {
    try {
      instantiate(family_, family_.templates[0], config, shape_, "bf16", limits("sm_90a"));
      ADD_FAILURE() << "expected an error mentioning " << part;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  family_.templates[0].args[1].swizzle = "48";
  expect_error("args[1].swizzle: 48 is not 0, 32, 64 or 128");
  family_.templates[0].args[1].swizzle = "32";
  family_.templates[0].args[1].box[0] = "32";  // 64 bytes of bf16 in a 32-byte swizzle span
  expect_error("wider than its 32-byte swizzle");
  family_.templates[0].args[1].box[0] = "N";
  family_.templates[0].args[1].swizzle = "0";
  family_.templates[0].args[1].box[1] = "512";  // the copy engine's box limit is 256
  expect_error("args[1].box[1]");
  family_.templates[0].args[1].box[1] = "TILE";
  family_.templates[0].args[1].dims[1] = "M+1";  // one row past the buffer
  expect_error("more than buffer X holds");
}

TEST_F(VariantSpaceTest, ValidateShapeAcceptsGoodShapes) {
  EXPECT_EQ(validate_shape(family_, shape_, "bf16"), std::nullopt);
  EXPECT_EQ(validate_shape(family_, {{"M", 1}, {"N", 4096}}, "fp16"), std::nullopt);
}

TEST_F(VariantSpaceTest, ValidateShapeNamesWhatIsWrong) {
  const auto error = [&](const Shape& shape, const std::string& dtype = "bf16") {
    return validate_shape(family_, shape, dtype).value_or("valid");
  };
  EXPECT_NE(error({{"M", 10}}).find("missing dimension 'N'"), std::string::npos);
  EXPECT_NE(error({{"M", -5}, {"N", 3}}).find("M=-5 is outside [1, 1048576]"), std::string::npos);
  EXPECT_NE(error({{"M", 0}, {"N", 3}}).find("M=0"), std::string::npos);
  EXPECT_NE(error({{"M", 10}, {"N", 4097}}).find("N=4097 is outside [1, 4096]"), std::string::npos);
  EXPECT_NE(error({{"M", 10}, {"N", 3}, {"K", 2}}).find("unknown dimension 'K'"),
            std::string::npos);
  // Within each dim's range but too large together.
  EXPECT_NE(error({{"M", 1048576}, {"N", 4096}}).find("violates 'M*N <= 2^24'"), std::string::npos);
  EXPECT_NE(error(shape_, "fp8").find("no dtype 'fp8'"), std::string::npos);
}

TEST_F(VariantSpaceTest, AVariantsIndexDecodesToItsConfigOnEveryArch) {
  for (const std::string arch : {"sm_80", "sm_90a", "sm_100a"}) {
    std::uint64_t expected = 0;
    const TemplateSpec* last = nullptr;
    for (const VariantPlan& plan : plans(arch)) {
      if (plan.unsupported_arch) continue;
      if (plan.tmpl != last) expected = 0;
      last = plan.tmpl;
      EXPECT_EQ(plan.index, expected++) << arch;
      EXPECT_EQ(variant_config(*plan.tmpl, arch, plan.index), plan.config) << arch;
    }
  }
}

TEST_F(VariantSpaceTest, AStopAbandonsAnEnumerationOfMillionsWithinItsCheckInterval) {
  TemplateSpec& wide = family_.templates[0];
  for (int a = 0; a < 3; ++a) {
    AxisSpec axis;
    axis.name = "W" + std::to_string(a);
    for (int v = 0; v < 100; ++v) axis.values.push_back(v);
    wide.axes.push_back(axis);
  }
  wide.constraints = {"W0 < 0"};  // 12 million configurations, none admitted
  std::uint64_t visited = 0;
  int asked = 0;
  const auto start = std::chrono::steady_clock::now();
  const bool whole = for_each_variant(
      family_, shape_, "bf16", limits("sm_90a"),
      [&](const VariantPlan& plan) {
        EXPECT_TRUE(plan.pruned_by.has_value());
        ++visited;
      },
      [&] { return ++asked == 3; });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(whole);
  EXPECT_EQ(asked, 3);
  // Stopped far from the end: how far it got in two intervals depends on the machine's speed.
  EXPECT_LT(visited, 6'000'000u) << "of 12,000,000";
  // Asked no more often than the interval: two intervals passed before the third question.
  EXPECT_GE(took, 2 * kStopCheckInterval);
  EXPECT_LT(took, std::chrono::seconds(5));
}

// An output smaller than the copy engine's 16-byte row (gemm_fp8's C at M=1, N=2: 4 bytes) still
// gets the one-row map its template passes when it stores without TMA (N % 8 != 0): the worker's
// guard after every output catches a kernel that would write through it. An input may not.
TEST(VariantSpaceShipped, AnOutputSmallerThanOneCopyRowStillGetsItsTensorMap) {
  const Family& family = test::shipped_family("gemm_fp8");
  const Config config{{"BK", 128},     {"BM", 64},     {"BN", 64},     {"CLUSTER_M", 1},
                      {"CLUSTER_N", 1}, {"CONSUMERS", 1}, {"EPILOGUE", 0}, {"GRID", 0},
                      {"GROUP", 8},     {"PROMOTE", 0},   {"RASTER", 0},   {"SCALING", 0},
                      {"SPLIT_K", 1},   {"STAGES", 4}};
  const Shape shape{{"M", 1}, {"N", 2}, {"K", 64}, {"BLOCK_SCALED", 0}};
  const ProblemInstance p = instantiate(family, family.templates[0], config, shape, "e4m3",
                                        limits_for_arch("sm_90a").value());
  const auto c_map = std::find_if(p.args.begin(), p.args.end(), [](const ArgInstance& a) {
    return a.kind == ArgInstance::Kind::tensor_map && a.buffer == "C";
  });
  ASSERT_NE(c_map, p.args.end());
  EXPECT_EQ(c_map->dims, (std::vector<std::int64_t>{8, 1}));

  Family inputs_too = family;  // the same row over an input of 2 elements is refused
  inputs_too.buffers[0].elements = "2";
  inputs_too.templates[0].args[1].dims = {"8", "1"};
  EXPECT_THROW(instantiate(inputs_too, inputs_too.templates[0], config, shape, "e4m3",
                           limits_for_arch("sm_90a").value()),
               FamilyError);
}

}  // namespace
}  // namespace kt
