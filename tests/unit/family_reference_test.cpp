// The manifest fields the attention and dual-GEMM families need: a reference kernel of the
// family's own folder, a baseline, dims with defaults, smoke shapes computed from the job's
// dims, and per-template resource figures.
#include <gtest/gtest.h>

#include "support/test_family.hpp"
#include "support/test_paths.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using Json = nlohmann::ordered_json;

#define EXPECT_HAS(text, part)                               \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << part << "' not in: " << (text)

// The tiny family, checked against a kernel of its own folder, with a flag dim and a smoke shape
// that follows the job's N.
Json kernel_reference_manifest() {
  Json m = test::tiny_family_manifest();
  m["dims"]["FLAG"] = {{"min", 0}, {"max", 1}, {"default", 0}};
  m["smoke_shape"] = {{"M", 7}, {"N", "min(N, 5)"}, {"FLAG", "FLAG"}};
  m["reference"] = Json::parse(R"json({
    "kind": "kernel", "source": "tiny.cuh", "kernel": "kt_tiny_reference", "output": "Y",
    "args": [{"reference_output": true}, {"buffer": "X"}, {"i32": "M"}, {"i64": "M*N"},
             {"f32": "0.5"}],
    "launch": {"grid": ["cdiv(M*N, 128)", "1", "1"], "block": ["128", "1", "1"],
               "dynamic_smem": "4*elem_bytes"}
  })json");
  m["baseline"] = {{"kind", "external"}, {"description", "a script times it"}};
  m["templates"][0]["resources"] = {{"tmem_columns", "TILE*2"}};
  return m;
}

Family load(const Json& manifest, test::TempDir& dir) {
  test::write_tiny_family(dir.path() / "tiny", manifest);
  return load_family(dir.path() / "tiny");
}

std::string load_error(const Json& manifest) {
  test::TempDir dir;
  try {
    load(manifest, dir);
  } catch (const FamilyError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelReference, LoadsAndInstantiatesWithEvaluatedArgsAndLaunch) {
  test::TempDir dir;
  const Family family = load(kernel_reference_manifest(), dir);
  EXPECT_EQ(family.reference.kind, "kernel");
  EXPECT_EQ(family.reference.kernel, "kt_tiny_reference");
  EXPECT_EQ(family.reference.output, "Y");
  ASSERT_EQ(family.reference.args.size(), 5u);
  EXPECT_EQ(family.reference.args[0].kind, ArgSpec::Kind::reference_output);
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->kind, "external");

  const DeviceLimits limits = limits_for_arch("sm_90a").value();
  const Shape shape{{"M", 300}, {"N", 2}, {"FLAG", 1}};
  const TemplateSpec& tmpl = family.templates[0];
  const ProblemInstance p = instantiate(family, tmpl, {{"TILE", 32}, {"SPLIT", 1}, {"CLUSTER", 1}},
                                        shape, "bf16", limits);
  ASSERT_EQ(p.reference.kind, "kernel");
  const nlohmann::json& ref = p.reference.params;
  EXPECT_EQ(ref["kernel"], "kt_tiny_reference");
  EXPECT_EQ(ref["source"], "tiny.cuh");
  EXPECT_EQ(ref["output"], "Y");
  ASSERT_EQ(ref["args"].size(), 5u);
  EXPECT_EQ(ref["args"][0]["kind"], "reference_output");
  EXPECT_EQ(ref["args"][1]["buffer"], "X");
  EXPECT_EQ(ref["args"][2]["value"], 300);
  EXPECT_EQ(ref["args"][3]["value"], 600);
  EXPECT_DOUBLE_EQ(ref["args"][4]["value"].get<double>(), 0.5);
  EXPECT_EQ(ref["launch"]["grid"], (std::vector<int>{5, 1, 1}));  // cdiv(600, 128)
  EXPECT_EQ(ref["launch"]["block"], (std::vector<int>{128, 1, 1}));
  EXPECT_EQ(ref["launch"]["dynamic_smem"], 8);

  EXPECT_EQ(template_resources(family, tmpl, {{"TILE", 64}, {"SPLIT", 1}}, shape, "bf16", limits),
            (std::map<std::string, std::int64_t>{{"tmem_columns", 128}}));
}

TEST(KernelReference, BadReferencesAreNamed) {
  Json m = kernel_reference_manifest();
  m["reference"]["args"].erase(0);
  EXPECT_HAS(load_error(m), "exactly one {\"reference_output\": true}");

  m = kernel_reference_manifest();
  m["reference"]["output"] = "X";
  EXPECT_HAS(load_error(m), "'X' is not an output buffer");

  m = kernel_reference_manifest();
  m["reference"]["source"] = "../escape.cuh";
  EXPECT_HAS(load_error(m), "reference.source");

  m = kernel_reference_manifest();
  m["reference"]["launch"]["grid"][0] = "TILE";  // an axis: a reference runs once per job
  EXPECT_HAS(load_error(m), "reference.launch.grid[0]");

  m = kernel_reference_manifest();
  m["args"].push_back({{"reference_output", true}});  // only a reference writes one
  EXPECT_HAS(load_error(m), "unknown argument kind 'reference_output'");

  m = kernel_reference_manifest();
  m["reference"]["kind"] = "magic";
  EXPECT_HAS(load_error(m), "'magic' is not a reference the worker knows");
}

// A kernel reference with a magnitude kernel of the same source: the tolerance's magnitude term
// may use it, and every instance names it with its reduction length evaluated.
TEST(KernelReference, MagnitudeKernelIsParsedAndInstantiated) {
  Json m = kernel_reference_manifest();
  m["reference"]["magnitude"] = {
      {"kernel", "kt_tiny_magnitude"}, {"reduction", "M*2"}, {"description", "|X|"}};
  m["tolerance"]["bf16"]["magnitude"] = 8;
  test::TempDir dir;
  const Family family = load(m, dir);
  ASSERT_TRUE(family.reference.magnitude.has_value());
  EXPECT_EQ(family.reference.magnitude->kernel, "kt_tiny_magnitude");
  EXPECT_EQ(family.reference.magnitude->reduction, "M*2");
  EXPECT_EQ(family.reference.magnitude->description, "|X|");
  EXPECT_EQ(family.tolerance.at("bf16").magnitude, 8);

  const ProblemInstance p =
      instantiate(family, family.templates[0], {{"TILE", 32}, {"SPLIT", 1}, {"CLUSTER", 1}},
                  {{"M", 300}, {"N", 2}, {"FLAG", 1}}, "bf16", limits_for_arch("sm_90a").value());
  EXPECT_EQ(p.reference.params["magnitude"],
            (nlohmann::json{
                {"kernel", "kt_tiny_magnitude"}, {"reduction", 600}, {"description", "|X|"}}));

  // Without one, an instance names none.
  test::TempDir plain_dir;
  const Family plain = load(kernel_reference_manifest(), plain_dir);
  EXPECT_FALSE(plain.reference.magnitude.has_value());
  EXPECT_FALSE(instantiate(plain, plain.templates[0], {{"TILE", 32}, {"SPLIT", 1}, {"CLUSTER", 1}},
                           {{"M", 300}, {"N", 2}, {"FLAG", 0}}, "bf16",
                           limits_for_arch("sm_90a").value())
                   .reference.params.contains("magnitude"));
}

TEST(KernelReference, BadMagnitudesAreNamed) {
  Json m = kernel_reference_manifest();
  m["tolerance"]["bf16"]["magnitude"] = 8;  // no magnitude kernel to give it an m
  EXPECT_HAS(load_error(m),
             "tolerance.bf16.magnitude: needs a reference that computes a magnitude");

  const Json with_kernel = [] {
    Json m = kernel_reference_manifest();
    m["reference"]["magnitude"] = {
        {"kernel", "kt_tiny_magnitude"}, {"reduction", "M"}, {"description", "|X|"}};
    return m;
  }();
  m = with_kernel;
  m["reference"]["magnitude"].erase("reduction");
  EXPECT_HAS(load_error(m), "reference.magnitude.reduction");
  m = with_kernel;
  m["reference"]["magnitude"]["reduction"] = "TILE";  // an axis: one reference per job
  EXPECT_HAS(load_error(m), "reference.magnitude.reduction");
  m = with_kernel;
  m["reference"]["magnitude"]["kernel"] = "kt_tiny_reference";
  EXPECT_HAS(load_error(m), "must be another kernel than the reference's own");
  m = with_kernel;
  m["reference"]["magnitude"]["kernel"] = "not an identifier";
  EXPECT_HAS(load_error(m), "reference.magnitude.kernel");
  m = with_kernel;
  m["reference"]["magnitude"].erase("description");
  EXPECT_HAS(load_error(m), "reference.magnitude.description");
  m = with_kernel;
  m["reference"]["magnitude"]["scale"] = 2;
  EXPECT_HAS(load_error(m), "reference.magnitude.scale");
  m = with_kernel;
  m["tolerance"]["bf16"]["magnitude"] = -1;
  EXPECT_HAS(load_error(m), "tolerance.bf16.magnitude: must be a non-negative number");
  m = with_kernel;
  m["tolerance"]["bf16"]["magnitude"] = 256;  // 256 * 2^-8 = 1: an all-zero output would pass
  EXPECT_HAS(load_error(m), "tolerance.bf16.magnitude: must be below 256");
}

TEST(Baseline, KindsAndTheirParams) {
  Json m = kernel_reference_manifest();
  m["baseline"] = {{"kind", "cublaslt_gemm"},
                   {"a", "X"},
                   {"b", "X"},
                   {"c", "Y"},
                   {"m", "M"},
                   {"n", "N"},
                   {"k", "1"}};
  test::TempDir dir;
  const Family family = load(m, dir);
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->params["a"], "X");
  EXPECT_EQ(family.baseline->params["m"], "M");

  m["baseline"].erase("c");
  EXPECT_HAS(load_error(m), "baseline");
  m["baseline"] = {{"kind", "external"}};
  EXPECT_HAS(load_error(m), "an external baseline must say what it is");
  m["baseline"] = {{"kind", "cudnn"}, {"description", "x"}};
  EXPECT_HAS(load_error(m), "'cudnn' is not a baseline kerntune knows");
}

TEST(Baseline, Fp8GemmNamesItsScaleBuffersAndKeepsBlockScaled) {
  Json m = kernel_reference_manifest();
  m["baseline"] = {{"kind", "cublaslt_fp8_gemm"},
                   {"a", "X"},
                   {"b", "X"},
                   {"c", "Y"},
                   {"scale_a", "X"},
                   {"scale_b", "X"},
                   {"m", "M"},
                   {"n", "N"},
                   {"k", "128"},
                   {"block_scaled", true}};
  test::TempDir dir;
  const Family family = load(m, dir);
  ASSERT_TRUE(family.baseline.has_value());
  EXPECT_EQ(family.baseline->params["scale_b"], "X");
  EXPECT_EQ(family.baseline->params["block_scaled"], true);

  m["baseline"].erase("scale_a");
  EXPECT_HAS(load_error(m), "baseline.scale_a: required field is missing");
  m["baseline"]["scale_a"] = "SCALES";
  EXPECT_HAS(load_error(m), "baseline.scale_a: must name a declared buffer");
}

TEST(DimDefaults, FillOmittedDimsAndMayStartAtZero) {
  test::TempDir dir;
  const Family family = load(kernel_reference_manifest(), dir);
  EXPECT_EQ(with_default_dims(family, {{"M", 4}, {"N", 3}}),
            (Shape{{"M", 4}, {"N", 3}, {"FLAG", 0}}));
  EXPECT_EQ(with_default_dims(family, {{"M", 4}, {"N", 3}, {"FLAG", 1}})["FLAG"], 1);
  EXPECT_FALSE(validate_shape(family, {{"M", 4}, {"N", 3}, {"FLAG", 0}}, "bf16").has_value());
  EXPECT_TRUE(validate_shape(family, {{"M", 4}, {"N", 3}, {"FLAG", 2}}, "bf16").has_value());

  Json m = kernel_reference_manifest();
  m["dims"]["FLAG"]["default"] = 5;
  EXPECT_HAS(load_error(m), "dims.FLAG.default");
}

TEST(SmokeShape, FollowsTheJobsDims) {
  test::TempDir dir;
  const Family family = load(kernel_reference_manifest(), dir);
  EXPECT_EQ(smoke_shape_for(family, {{"M", 4096}, {"N", 2}, {"FLAG", 1}}),
            (Shape{{"M", 7}, {"N", 2}, {"FLAG", 1}}));
  EXPECT_EQ(smoke_shape_for(family, {{"M", 4096}, {"N", 4096}, {"FLAG", 0}}),
            (Shape{{"M", 7}, {"N", 5}, {"FLAG", 0}}));

  Json m = kernel_reference_manifest();
  m["smoke_shape"]["N"] = "TILE";
  EXPECT_HAS(load_error(m), "smoke_shape.N");
  m = kernel_reference_manifest();
  m["smoke_shape"]["Q"] = 3;
  EXPECT_HAS(load_error(m), "'Q' is not a dim");
}

}  // namespace
}  // namespace kt
