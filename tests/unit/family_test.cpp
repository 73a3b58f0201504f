#include "tuner/family.hpp"

#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "support/test_family.hpp"
#include "support/test_paths.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using Json = nlohmann::ordered_json;

// Loads the tiny family after `mutate` broke it; returns the FamilyError text ("" if it loaded).
std::string load_error(const std::function<void(Json&)>& mutate) {
  test::TempDir dir;
  Json manifest = test::tiny_family_manifest();
  mutate(manifest);
  test::write_tiny_family(dir.path() / "tiny", manifest);
  try {
    load_family(dir.path() / "tiny");
  } catch (const FamilyError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part)                               \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << part << "' not in: " << (text)

// Results are keyed to the family's sources: any change of the manifest or of a device source
// changes the hash; reading the same files again does not.
TEST(LoadFamily, SourceHashFollowsTheManifestAndEverySource) {
  test::TempDir dir;
  const auto tiny = dir.path() / "tiny";
  test::write_tiny_family(tiny, test::tiny_family_manifest());
  const std::string hash = load_family(tiny).source_hash;
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(load_family(tiny).source_hash, hash);

  std::ofstream(tiny / "tiny.cuh", std::ios::app) << "\n// a comment changes the source\n";
  const std::string edited_source = load_family(tiny).source_hash;
  EXPECT_NE(edited_source, hash);

  Json manifest = test::tiny_family_manifest();
  manifest["description"] = "Y = X * 0.5, described again";
  test::write_tiny_family(tiny, manifest);  // rewrites the sources as they were
  const std::string edited_manifest = load_family(tiny).source_hash;
  EXPECT_NE(edited_manifest, hash);
  EXPECT_NE(edited_manifest, edited_source);
}

// Dims and axes are listed and enumerated in the manifest's key order, so the family keeps it
// (GET /v1/families shows it); the hash leaves it out, as results do not depend on it.
TEST(LoadFamily, KeepsTheManifestsKeyOrderWhichTheHashLeavesOut) {
  test::TempDir dir;
  const auto tiny = dir.path() / "tiny";
  Json manifest = test::tiny_family_manifest();
  manifest["dims"] = Json::parse(R"({"N": {"min": 1, "max": 4096}, "M": {"min": 1, "max": 64}})");
  test::write_tiny_family(tiny, manifest);
  const Family family = load_family(tiny);
  EXPECT_EQ(family.manifest.dump(), manifest.dump());
  ASSERT_EQ(family.dims.size(), 2u);
  EXPECT_EQ(family.dims[0].name, "N");

  test::write_tiny_family(tiny, Json::parse(nlohmann::json(manifest).dump()));  // keys sorted
  const Family sorted = load_family(tiny);
  EXPECT_EQ(sorted.dims[0].name, "M");
  EXPECT_NE(sorted.manifest, family.manifest);
  EXPECT_EQ(sorted.source_hash, family.source_hash);
}

TEST(LoadFamily, ReadsEveryPartOfTheManifest) {
  test::TempDir dir;
  test::write_tiny_family(dir.path() / "tiny", test::tiny_family_manifest());
  const Family family = load_family(dir.path() / "tiny");

  EXPECT_EQ(family.name, "tiny");
  EXPECT_EQ(family.description, "Y = X * 0.5");
  EXPECT_EQ(family.dir, dir.path() / "tiny");
  ASSERT_EQ(family.dims.size(), 2u);
  EXPECT_EQ(family.dims[0].name, "M");
  EXPECT_EQ(family.dims[0].max, 1048576);
  EXPECT_EQ(family.dims[0].description, "rows");
  EXPECT_EQ(family.dims[1].name, "N");
  EXPECT_EQ(family.dims[1].max, 4096);
  EXPECT_EQ(family.dtypes, (std::vector<std::string>{"bf16", "fp16"}));
  EXPECT_EQ(family.shape_constraints, (std::vector<std::string>{"M*N <= 2^24"}));
  EXPECT_EQ(smoke_shape_for(family, {}), (Shape{{"M", 7}, {"N", 5}}));
  EXPECT_EQ(family.flops, "M*N");
  EXPECT_EQ(family.bytes, "2*M*N*elem_bytes");
  EXPECT_EQ(family.tolerance.at("bf16"), (Tolerance{0.03125, 0.0078125, 0.0078125}));
  EXPECT_EQ(family.tolerance.at("fp16"), (Tolerance{0.03125, 0.0009765625, 0.0009765625}));
  EXPECT_EQ(tolerance_for(family, "fp16").rtol, 0.0009765625);
  EXPECT_THROW(tolerance_for(family, "f32"), FamilyError);

  ASSERT_EQ(family.buffers.size(), 3u);
  EXPECT_EQ(family.buffers[2].name, "ws");
  EXPECT_EQ(family.buffers[2].role, "scratch");
  EXPECT_EQ(family.buffers[2].dtype, "f32");
  EXPECT_EQ(family.buffers[2].elements, "SPLIT > 1 ? M*SPLIT : 1");

  ASSERT_EQ(family.args.size(), 5u);
  EXPECT_EQ(family.args[0].kind, ArgSpec::Kind::buffer);
  EXPECT_EQ(family.args[0].value, "Y");
  EXPECT_EQ(family.args[2].kind, ArgSpec::Kind::i32);
  EXPECT_EQ(family.args[3].kind, ArgSpec::Kind::i64);
  EXPECT_EQ(family.args[3].value, "M*N");
  EXPECT_EQ(family.args[4].kind, ArgSpec::Kind::f32);

  EXPECT_EQ(family.reference.kind, "cublas_gemm");
  EXPECT_EQ(family.reference.params.at("a"), "X");
  EXPECT_EQ(family.reference.params.at("k"), "1");
  EXPECT_EQ(family.reference.params.at("transposed"), false);
  EXPECT_FALSE(family.reference.params.contains("kind"));

  ASSERT_EQ(family.templates.size(), 2u);
  const TemplateSpec& simple = family.templates[0];
  EXPECT_EQ(simple.name, "simple");
  EXPECT_EQ(simple.kernel, "kt_tiny");
  EXPECT_EQ(simple.archs, (std::vector<std::string>{"sm_80", "sm_90a", "sm_100a"}));
  ASSERT_EQ(simple.axes.size(), 3u);  // manifest order, not alphabetical
  EXPECT_EQ(simple.axes[0].name, "TILE");
  EXPECT_EQ(simple.axes[0].values, (std::vector<std::int64_t>{32, 64, 128}));
  EXPECT_EQ(simple.axes[0].description, "elements per block");
  EXPECT_EQ(simple.axes[1].name, "SPLIT");
  EXPECT_EQ(simple.axes[2].name, "CLUSTER");
  EXPECT_EQ(simple.axes[2].archs, (std::vector<std::string>{"sm_90a", "sm_100a"}));
  EXPECT_EQ(simple.constraints.size(), 2u);
  EXPECT_EQ(simple.launch.grid[0], "cdiv(M, TILE)");
  EXPECT_EQ(simple.launch.block[1], "1");  // JSON integers become expression text
  EXPECT_EQ(simple.launch.dynamic_smem, "TILE*elem_bytes");
  EXPECT_EQ(simple.options, (std::vector<std::string>{"-lineinfo"}));
  const TemplateSpec& blackwell = family.templates[1];
  EXPECT_EQ(blackwell.launch.cluster, (std::array<std::string, 3>{"1", "1", "1"}));
  EXPECT_EQ(blackwell.launch.dynamic_smem, "0");

  // Every .cuh/.h of the folder, sorted by name, with its text; other files are not sources.
  ASSERT_EQ(family.sources.size(), 2u);
  EXPECT_EQ(family.sources[0].first, "tiny.cuh");
  EXPECT_HAS(family.sources[0].second, "kt_tiny");
  EXPECT_EQ(family.sources[1].first, "tiny_common.h");
  EXPECT_EQ(family.manifest.at("name"), "tiny");
}

TEST(LoadFamily, MissingRequiredFieldsAreNamed) {
  for (const char* field : {"name", "dims", "dtypes", "flops", "bytes", "buffers", "args",
                            "reference", "tolerance", "templates"}) {
    const std::string error = load_error([&](Json& m) { m.erase(field); });
    EXPECT_HAS(error, "manifest.json");
    EXPECT_HAS(error, std::string(field) + ": required field is missing");
  }
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0].erase("kernel"); }),
             "templates[0].kernel: required field is missing");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["launch"].erase("block"); }),
             "templates[0].launch.block: required field is missing");
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][1].erase("elements"); }),
             "buffers[1].elements: required field is missing");
}

TEST(LoadFamily, UnknownKeysAreRejectedButCommentsPass) {
  EXPECT_HAS(load_error([](Json& m) { m["constraint"] = Json::array(); }),
             "constraint: unknown field");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["axis"] = Json::object(); }),
             "templates[0].axis: unknown field");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["axes"]["TILE"]["value"] = 1; }),
             "templates[0].axes.TILE.value: unknown field");
  EXPECT_EQ(load_error([](Json& m) {
              m["$schema"] = "x";
              m["templates"][0]["_note"] = "y";
            }),
            "");
}

TEST(LoadFamily, ExpressionsMustParseAndNameKnownThings) {
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["constraints"][0] = "TILE *"; }),
             "templates[0].constraints[0]: cannot parse expression 'TILE *'");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["launch"]["grid"][0] = "cdiv(M, BQ)"; }),
             "templates[0].launch.grid[0]: 'cdiv(M, BQ)' uses 'BQ'");
  EXPECT_HAS(load_error([](Json& m) { m["flops"] = "M*N*TILE"; }), "flops: 'M*N*TILE' uses 'TILE'");
  EXPECT_HAS(load_error([](Json& m) { m["shape_constraints"][0] = "M <= smem_optin"; }),
             "shape_constraints[0]");
  EXPECT_HAS(load_error([](Json& m) { m["args"][2] = {{"i32", "M + Z"}}; }), "args[2].i32");
  EXPECT_HAS(load_error([](Json& m) { m["reference"]["m"] = "MM"; }), "reference.m");
  EXPECT_HAS(load_error([](Json& m) {
               m["templates"][0]["launch"]["block"] = {"1", "1"};
             }),
             "templates[0].launch.block: must be a list of 3");
}

TEST(LoadFamily, ArchRestrictedAxesMayOnlyBeUsedWhereTheyExist) {
  // CLUSTER exists on sm_90a and sm_100a only; the template also runs on sm_80.
  const std::string error =
      load_error([](Json& m) { m["templates"][0]["launch"]["cluster"][0] = "CLUSTER"; });
  EXPECT_HAS(error, "templates[0].launch.cluster[0]");
  EXPECT_HAS(error, "'CLUSTER'");
  EXPECT_HAS(error, "on sm_80");
  // Dropping sm_80 from the template makes the same expression fine.
  EXPECT_EQ(load_error([](Json& m) {
              m["templates"][0]["launch"]["cluster"][0] = "CLUSTER";
              m["templates"][0]["archs"] = {"sm_90a", "sm_100a"};
            }),
            "");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["axes"]["CLUSTER"]["archs"] = {"sm_75"}; }),
             "templates[0].axes.CLUSTER.archs: 'sm_75' is not one of the template's archs");
  // A buffer size using an axis one template lacks is caught against that template.
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][2]["elements"] = "M*CLUSTER"; }),
             "buffers[2].elements");
}

TEST(LoadFamily, BuffersArgsAndReferenceAreCrossChecked) {
  EXPECT_HAS(load_error([](Json& m) {
               m["args"][1] = {{"buffer", "Q"}};
             }),
             "args[1].buffer: must name a declared buffer");
  EXPECT_HAS(load_error([](Json& m) {
               m["args"][1] = {{"u8", "1"}};
             }),
             "args[1]: unknown argument kind 'u8'");
  EXPECT_HAS(load_error([](Json& m) {
               m["args"][1] = {{"i32", "1"}, {"i64", "2"}};
             }),
             "args[1]: must be an object with one of");
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][0]["role"] = "inout"; }),
             "buffers[0].role: 'inout' is not input, output or scratch");
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][0]["dtype"] = "f64"; }), "buffers[0].dtype");
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][1]["name"] = "X"; }),
             "buffer 'X' is declared twice");
  EXPECT_HAS(load_error([](Json& m) { m["buffers"][1]["role"] = "input"; }),
             "needs at least one output buffer");
  EXPECT_HAS(load_error([](Json& m) { m["reference"]["c"] = "Q"; }),
             "reference.c: must name a declared buffer");
  EXPECT_HAS(load_error([](Json& m) { m["reference"].erase("k"); }),
             "reference.k: required field is missing");
  EXPECT_HAS(load_error([](Json& m) { m["reference"]["kind"] = "numpy"; }), "reference.kind");
}

TEST(LoadFamily, TemplateArgsWithTensorMapsReplaceTheFamilyArgs) {
  test::TempDir dir;
  Json manifest = test::tiny_family_manifest();
  manifest["templates"][0]["args"] = Json::parse(
      R"([{"buffer": "Y"}, {"tensor_map": "X", "dims": ["N", "M"], "box": [64, "TILE"],
          "swizzle": 128}, {"i32": "M"}])");
  test::write_tiny_family(dir.path() / "tiny", manifest);
  const Family family = load_family(dir.path() / "tiny");
  const std::vector<ArgSpec>& args = kernel_args(family, family.templates[0]);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[1].kind, ArgSpec::Kind::tensor_map);
  EXPECT_EQ(args[1].value, "X");
  EXPECT_EQ(args[1].dims, (std::vector<std::string>{"N", "M"}));
  EXPECT_EQ(args[1].box, (std::vector<std::string>{"64", "TILE"}));
  EXPECT_EQ(args[1].swizzle, "128");
  EXPECT_EQ(kernel_args(family, family.templates[1]).size(), 5u);  // the family's
}

TEST(LoadFamily, BadTensorMapArgsAreNamed) {
  auto with_arg = [](const char* arg) {
    return [arg](Json& m) { m["templates"][0]["args"] = Json::array({Json::parse(arg)}); };
  };
  EXPECT_HAS(load_error(with_arg(R"({"tensor_map": "Q", "dims": ["M"], "box": [8]})")),
             "templates[0].args[0].tensor_map: must name a declared buffer");
  EXPECT_HAS(load_error(with_arg(R"({"tensor_map": "X", "dims": ["M", "N"], "box": [8]})")),
             "templates[0].args[0].box: needs one entry per entry of dims");
  EXPECT_HAS(load_error(with_arg(R"({"tensor_map": "X", "dims": [], "box": []})")),
             "templates[0].args[0].dims: must be a list of 1 to 5 expressions");
  EXPECT_HAS(load_error(with_arg(R"({"tensor_map": "X", "dims": ["M"], "box": ["NOPE"]})")),
             "NOPE");
  EXPECT_HAS(load_error(with_arg(R"({"tensor_map": "X", "dims": ["M"], "box": [8], "x": 1})")),
             "templates[0].args[0]");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["args"] = Json::array(); }),
             "templates[0].args: must not be empty");
}

TEST(LoadFamily, AxesDimsDtypesAndTemplatesAreValidated) {
  EXPECT_HAS(
      load_error([](Json& m) { m["templates"][0]["axes"]["TILE"]["values"] = Json::array(); }),
      "templates[0].axes.TILE.values: must be a non-empty list of integers");
  EXPECT_HAS(load_error([](Json& m) {
               m["templates"][0]["axes"]["TILE"]["values"] = {32, 1.5};
             }),
             "templates[0].axes.TILE.values: must be a non-empty list of integers");
  EXPECT_HAS(load_error([](Json& m) {
               m["templates"][0]["axes"]["TILE"]["values"] = {32, 32};
             }),
             "lists a value twice");
  EXPECT_HAS(load_error([](Json& m) {
               m["templates"][0]["axes"]["M"] = {{"values", {1}}};
             }),
             "templates[0].axes.M");
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["sm"] = Json::object(); }),
             "dims.sm: 'sm' is a reserved name");
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["M"]["min"] = -1; }),
             "dims.M.min: must not be negative");
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["M"]["max"] = "big"; }),
             "dims.M.max: must be an integer");
  EXPECT_HAS(load_error([](Json& m) { m["dtypes"] = {"bf16", "fp8"}; }), "'fp8'");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"].erase("fp16"); }),
             "no tolerance for dtype 'fp16'");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["bf16"] = -1; }), "tolerance.bf16");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["source"] = "missing.cuh"; }),
             "templates[0].source: 'missing.cuh' is not a file");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][1]["name"] = "simple"; }),
             "template 'simple' is declared twice");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["archs"][0] = "ampere"; }),
             "'ampere' is not an NVRTC target");
  EXPECT_HAS(load_error([](Json& m) { m["templates"][0]["kernel"] = "kt tiny"; }),
             "templates[0].kernel");
  EXPECT_HAS(load_error([](Json& m) { m["templates"] = Json::array(); }),
             "templates: must be a non-empty list");
  EXPECT_HAS(load_error([](Json& m) { m["smoke_shape"]["M"] = 0; }), "smoke_shape");
}

TEST(LoadFamily, ToleranceIsPerElementAndEveryFieldIsChecked) {
  // The old form, a plain max rel_l2, is refused and the message says what to write instead.
  const std::string plain = load_error([](Json& m) { m["tolerance"]["bf16"] = 0.01; });
  EXPECT_HAS(plain, "tolerance.bf16: must be an object");
  EXPECT_HAS(plain, "\"atol\"");
  EXPECT_HAS(plain, "plain number");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["bf16"].erase("rtol"); }),
             "tolerance.bf16.rtol: required field is missing");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["fp16"]["atol"] = -0.5; }),
             "tolerance.fp16.atol: must be a non-negative number");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["fp16"]["atol"] = "0.1"; }),
             "tolerance.fp16.atol: must be a non-negative number");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["bf16"]["rel_l2"] = 1.0; }),
             "tolerance.bf16.rel_l2: must be below 1");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["bf16"]["rtol"] = 2; }),
             "tolerance.bf16.rtol: must be below 1");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["bf16"]["max_rel_l2"] = 0.01; }),
             "tolerance.bf16.max_rel_l2: unknown field");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"]["f32"] = m["tolerance"]["bf16"]; }),
             "tolerance.f32: dtype 'f32' is not in dtypes");
  EXPECT_HAS(load_error([](Json& m) { m["tolerance"] = 0.01; }), "tolerance: must be an object");
  // A large atol is allowed (it is in the output's units, which only the family knows); a
  // comment beside the dtypes passes.
  EXPECT_EQ(load_error([](Json& m) {
              m["tolerance"]["bf16"]["atol"] = 4;
              m["tolerance"]["_why"] = "see kernel_templates/README.md";
            }),
            "");
}

TEST(LoadFamily, ReportsEveryProblemAtOnce) {
  const std::string error = load_error([](Json& m) {
    m.erase("flops");
    m["args"][0] = {{"buffer", "Q"}};
  });
  EXPECT_HAS(error, "flops: required field is missing");
  EXPECT_HAS(error, "args[0].buffer");
}

// Numbers meet expressions, which evaluate in doubles: past 2^53 (or past int64, where nlohmann
// reads an unsigned) a value is refused as such, never wrapped into "below min" or rounded.
TEST(LoadFamily, NumbersOutsideTheExactIntegerRangeAreRefusedSayingSo) {
  const std::string two_to_63 =
      load_error([](Json& m) { m["dims"]["M"]["max"] = std::uint64_t{1} << 63; });
  EXPECT_HAS(two_to_63,
             "dims.M.max: 9223372036854775808 is outside the exact integer range (|x| <= 2^53)");
  EXPECT_EQ(two_to_63.find("below min"), std::string::npos) << two_to_63;
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["M"]["max"] = (std::int64_t{1} << 53) + 1; }),
             "dims.M.max: 9007199254740993 is outside the exact integer range");
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["M"]["min"] = -(std::int64_t{1} << 60); }),
             "dims.M.min: -1152921504606846976 is outside the exact integer range");
  EXPECT_HAS(load_error([](Json& m) { m["dims"]["M"]["default"] = 1e300; }),
             "dims.M.default: 1e+300 is outside the exact integer range");
  EXPECT_HAS(load_error([](Json& m) {
               m["templates"][0]["axes"]["TILE"]["values"] = {32, std::uint64_t{1} << 63};
             }),
             "templates[0].axes.TILE.values[1]: 9223372036854775808 is outside the exact");
  EXPECT_HAS(load_error([](Json& m) { m["smoke_shape"]["M"] = std::uint64_t{1} << 63; }),
             "smoke_shape.M: 9223372036854775808 is outside the exact integer range");
  // 2^53 itself is exact.
  EXPECT_EQ(load_error([](Json& m) { m["dims"]["M"]["max"] = std::int64_t{1} << 53; }), "");
}

// A manifest's text comes back in messages as a short prefix (the API's one cap), in a path or a
// quote alike, and a manifest with thousands of problems lists the first few and a count.
TEST(LoadFamily, MessagesQuoteAShortPrefixOfLongValues) {
  const std::string huge(400'000, 'x');
  const std::string constraint = load_error([&](Json& m) { m["shape_constraints"] = {huge}; });
  EXPECT_HAS(constraint, "(400000 bytes)");
  EXPECT_LT(constraint.size(), 2000u);
  const std::string unparsable =
      load_error([&](Json& m) { m["shape_constraints"] = {"M + (" + huge + " *"}; });
  EXPECT_HAS(unparsable, "shape_constraints[0]");
  EXPECT_LT(unparsable.size(), 2000u);
  const std::string key = load_error([&](Json& m) { m["dims"][huge + "-"] = Json::object(); });
  EXPECT_HAS(key, "name must be an identifier");
  EXPECT_HAS(key, "dims.'xxxx");
  EXPECT_LT(key.size(), 2000u);
  const std::string dtypes = load_error([&](Json& m) {
    m["dtypes"] = Json::array();
    for (int i = 0; i < 5000; ++i) m["dtypes"].push_back("fp" + std::to_string(i));
  });
  EXPECT_HAS(dtypes, "more problems");
  EXPECT_LT(dtypes.size(), 4000u);
}

TEST(LoadFamily, UnreadableOrInvalidJsonIsAFamilyError) {
  test::TempDir dir;
  EXPECT_THROW(load_family(dir.path()), FamilyError);  // no manifest.json
  std::ofstream(dir.path() / "manifest.json") << "{ not json";
  try {
    load_family(dir.path());
    FAIL() << "expected a FamilyError";
  } catch (const FamilyError& e) {
    EXPECT_HAS(e.what(), "not valid JSON");
    EXPECT_HAS(e.what(), "manifest.json");
  }
}

TEST(DtypeBytes, KnownAndUnknownNames) {
  EXPECT_EQ(dtype_bytes("bf16"), 2);
  EXPECT_EQ(dtype_bytes("fp16"), 2);
  EXPECT_EQ(dtype_bytes("f32"), 4);
  EXPECT_EQ(dtype_bytes("i32"), 4);
  EXPECT_EQ(dtype_bytes("u32"), 4);
  EXPECT_EQ(dtype_bytes("fp8"), 0);
  EXPECT_EQ(dtype_bytes(""), 0);
}

TEST(FamilyRegistry, LoadsGoodFamiliesAndReportsBrokenOnes) {
  test::TempDir root;
  test::write_tiny_family(root.path() / "a_tiny", test::tiny_family_manifest());
  Json broken = test::tiny_family_manifest();
  broken["name"] = "broken";
  broken.erase("templates");
  test::write_tiny_family(root.path() / "b_broken", broken);
  Json second = test::tiny_family_manifest();
  second["name"] = "second";
  test::write_tiny_family(root.path() / "c_second", second);
  std::filesystem::create_directories(root.path() / "d_no_manifest");

  FamilyRegistry registry;
  registry.load_root(root.path());
  ASSERT_EQ(registry.all().size(), 2u);
  EXPECT_EQ(registry.all()[0]->name, "tiny");
  EXPECT_EQ(registry.all()[1]->name, "second");
  ASSERT_NE(registry.find("second"), nullptr);
  EXPECT_EQ(registry.find("second")->dir, root.path() / "c_second");
  EXPECT_EQ(registry.find("broken"), nullptr);
  ASSERT_EQ(registry.errors().size(), 1u);
  EXPECT_HAS(registry.errors()[0], "b_broken");
  EXPECT_HAS(registry.errors()[0], "templates");

  Family duplicate = *registry.find("tiny");
  EXPECT_THROW(registry.add(std::move(duplicate)), FamilyError);
  EXPECT_EQ(registry.all().size(), 2u);
}

TEST(FamilyRegistry, CommonFolderIsSharedAndNotAFamily) {
  test::TempDir root;
  test::write_tiny_family(root.path() / "tiny", test::tiny_family_manifest());
  std::filesystem::create_directories(root.path() / "common");
  std::ofstream(root.path() / "common" / "shared_block.cuh") << "// shared by every family\n";
  std::ofstream(root.path() / "common" / "tiny.cuh") << "// shadowed by the family's own\n";
  std::ofstream(root.path() / "common" / "notes.txt") << "not a source\n";

  FamilyRegistry registry;
  registry.load_root(root.path());
  EXPECT_TRUE(registry.errors().empty());
  ASSERT_EQ(registry.all().size(), 1u) << "common/ has no manifest: it is not a family";
  const auto& sources = registry.all()[0]->sources;
  ASSERT_EQ(sources.size(), 3u);  // sorted by file name, wherever the file lives
  EXPECT_EQ(sources[0].first, "shared_block.cuh");
  EXPECT_EQ(sources[1].first, "tiny.cuh");
  EXPECT_HAS(sources[1].second, "kt_tiny") << "the family's own file wins over common/";
  EXPECT_EQ(sources[2].first, "tiny_common.h");
}

// A registered family is added, then replaced by its next version; a pointer to the older one
// stays valid (a running job holds it); a shipped family is never replaced.
TEST(FamilyRegistry, RegisteredFamiliesAreReplacedByTheirNextVersionShippedOnesNever) {
  test::TempDir root;
  test::write_tiny_family(root.path() / "tiny", test::tiny_family_manifest());
  FamilyRegistry registry;
  registry.load_root(root.path());
  ASSERT_NE(registry.find("tiny"), nullptr);
  EXPECT_FALSE(registry.find("tiny")->registered);
  Family shipped_copy = *registry.find("tiny");
  EXPECT_THROW(registry.put_registered(std::move(shipped_copy)), FamilyError);

  auto manifest = test::tiny_family_manifest();
  manifest["name"] = "mine";
  test::write_tiny_family(root.path() / "other" / "mine", manifest);
  Family first = load_family(root.path() / "other" / "mine");
  first.source_hash = "v1";
  registry.put_registered(first);
  const Family* held = registry.find("mine");
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->registered);
  Family second = first;
  second.source_hash = "v2";
  registry.put_registered(std::move(second));
  EXPECT_EQ(registry.find("mine")->source_hash, "v2");
  EXPECT_EQ(held->source_hash, "v1") << "the older version lives on for its readers";
  EXPECT_EQ(registry.all().size(), 2u);
}

TEST(FamilyRegistry, MissingRootIsAnError) {
  FamilyRegistry registry;
  registry.load_root("/nonexistent/kerntune/families");
  EXPECT_TRUE(registry.all().empty());
  ASSERT_EQ(registry.errors().size(), 1u);
  EXPECT_HAS(registry.errors()[0], "/nonexistent/kerntune/families");
}

TEST(RealFamilies, KernelTemplatesLoadWithoutErrors) {
  const auto root = test::source_dir() / "kernel_templates";
  if (!std::filesystem::exists(root / "gemm" / "manifest.json"))
    GTEST_SKIP() << "kernel_templates/gemm/manifest.json not written yet";
  FamilyRegistry registry;
  registry.load_root(root);
  for (const std::string& error : registry.errors()) ADD_FAILURE() << error;
  const Family* gemm = registry.find("gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_NE(std::find(gemm->dtypes.begin(), gemm->dtypes.end(), "bf16"), gemm->dtypes.end());
  EXPECT_NE(std::find(gemm->dtypes.begin(), gemm->dtypes.end(), "fp16"), gemm->dtypes.end());
  EXPECT_FALSE(gemm->sources.empty());
  EXPECT_FALSE(validate_shape(*gemm, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, "bf16").has_value());

  // On Hopper the 4096^3 space has variants that survive the constraints and instantiate.
  const DeviceLimits limits = limits_for_arch("sm_90a").value();
  const Shape shape{{"M", 4096}, {"N", 4096}, {"K", 4096}};
  std::size_t survivors = 0;
  for (const VariantPlan& plan : enumerate_variants(*gemm, shape, "bf16", limits)) {
    if (plan.pruned_by || plan.unsupported_arch) continue;
    ++survivors;
    EXPECT_NO_THROW(instantiate(*gemm, *plan.tmpl, plan.config, shape, "bf16", limits))
        << canonical_key(plan.config);
    EXPECT_NO_THROW(
        instantiate(*gemm, *plan.tmpl, plan.config, smoke_shape_for(*gemm, shape), "bf16", limits))
        << canonical_key(plan.config);
  }
  EXPECT_GT(survivors, 0u);
}

}  // namespace
}  // namespace kt
