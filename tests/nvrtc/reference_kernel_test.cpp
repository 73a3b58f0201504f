// A family's kernel reference as the job runner prepares it (real NVRTC, a real Store): compiled
// once for the job's arch and dtype into the content-addressed kernel cache and written where the
// worker reads cubins; a second job takes it from the cache; a reference that does not compile
// fails with the kernel, the arch and the whole NVRTC log; instances name the cubin.
#include "engine/reference_kernel.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/child_compiler.hpp"
#include "support/shipped_family.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family_baseline.hpp"

namespace kt {
namespace {

class ReferenceKernelTest : public ::testing::Test {
 protected:
  ReferenceKernelTest() : store_(dir_.path() / "kerntune.db") {}

  KernelLookup lookup() {
    return [this](const std::string& key) {
      ++lookups_;
      return store_.find_kernel(key);
    };
  }

  test::TempDir dir_;
  Store store_;
  int lookups_ = 0;
};

TEST_F(ReferenceKernelTest, CompiledOnceIntoTheCacheAndWrittenForTheWorker) {
  const Family& family = test::shipped_family("dual_gemm_silu");
  const DeviceLimits limits = *limits_for_arch("sm_90a");
  const auto work = dir_.path() / "work";
  const auto path = prepare_reference_kernel(lookup(), test::child_compiler(), store_, family,
                                             "fp16", limits, work);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_GT(std::filesystem::file_size(path), 1000u);
  const std::string key = compile_cache_key(reference_compile_request(family, "fp16", limits));
  EXPECT_EQ(path.filename(), key + ".cubin") << "content-addressed, like variants";
  const auto blob = store_.find_kernel(key);
  ASSERT_TRUE(blob.has_value());
  EXPECT_EQ(blob->kernel, "kt_dual_gemm_silu_reference");
  EXPECT_EQ(blob->arch, "sm_90a");

  // Another job: the cache answers, the same file is named.
  std::filesystem::remove(path);
  EXPECT_EQ(prepare_reference_kernel(lookup(), test::child_compiler(), store_, family, "fp16",
                                     limits, work),
            path);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  // bf16 is another kernel (another key).
  EXPECT_NE(prepare_reference_kernel(lookup(), test::child_compiler(), store_, family, "bf16",
                                     limits, work),
            path);

  ProblemInstance problem;
  problem.reference.kind = "kernel";
  attach_reference_kernel(problem, path);
  EXPECT_EQ(problem.reference.params["cubin_path"], path.string());
  ProblemInstance library;
  library.reference.kind = "cublas_gemm";
  attach_reference_kernel(library, path);
  EXPECT_FALSE(library.reference.params.contains("cubin_path"));
}

TEST_F(ReferenceKernelTest, AReferenceThatDoesNotCompileFailsWithItsLog) {
  Family broken = test::shipped_family("attention_fwd");
  for (auto& [name, text] : broken.sources)
    if (name == broken.reference.source) text += "\nint this_is_not_cuda = ;\n";
  const DeviceLimits limits = *limits_for_arch("sm_90a");
  try {
    prepare_reference_kernel(lookup(), test::child_compiler(), store_, broken, "bf16", limits,
                             dir_.path());
    FAIL() << "a broken reference compiled";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kt_attention_reference"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_90a"), std::string::npos) << what;
    EXPECT_NE(what.find("NVRTC log"), std::string::npos) << what;
    EXPECT_NE(what.find("error"), std::string::npos) << what << ": the compiler's own words";
  }
}

// The magnitude kernel of each shipped kernel reference is compiled with it, into the same cubin
// the worker loads both from.
TEST_F(ReferenceKernelTest, TheMagnitudeKernelIsInTheReferencesCubin) {
  const DeviceLimits limits = *limits_for_arch("sm_90a");
  for (const char* name : {"attention_fwd", "dual_gemm_silu"}) {
    const Family& family = test::shipped_family(name);
    ASSERT_TRUE(family.reference.magnitude.has_value()) << name;
    for (const char* dtype : {"bf16", "fp16"}) {
      EXPECT_GT(tolerance_for(family, dtype).magnitude, 0) << name << " " << dtype;
      prepare_reference_kernel(lookup(), test::child_compiler(), store_, family, dtype, limits,
                               dir_.path() / "work");
      const auto blob =
          store_.find_kernel(compile_cache_key(reference_compile_request(family, dtype, limits)));
      ASSERT_TRUE(blob.has_value()) << name;
      EXPECT_TRUE(cubin_names_entry(blob->cubin, family.reference.kernel)) << name;
      EXPECT_TRUE(cubin_names_entry(blob->cubin, family.reference.magnitude->kernel)) << name;
    }
  }
}

TEST_F(ReferenceKernelTest, AMissingMagnitudeKernelFailsBeforeAnyGpu) {
  Family renamed = test::shipped_family("dual_gemm_silu");
  renamed.reference.magnitude->kernel = "kt_no_such_magnitude";
  try {
    prepare_reference_kernel(lookup(), test::child_compiler(), store_, renamed, "bf16",
                             *limits_for_arch("sm_90a"), dir_.path());
    FAIL() << "a reference without its magnitude kernel was prepared";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no magnitude kernel 'kt_no_such_magnitude'"), std::string::npos) << what;
    EXPECT_NE(what.find("dual_gemm_reference.cuh"), std::string::npos) << what;
  }
}

TEST_F(ReferenceKernelTest, OnlyAKernelReferenceHasACompileRequest) {
  const Family& gemm = test::shipped_family("gemm");
  EXPECT_THROW(reference_compile_request(gemm, "bf16", *limits_for_arch("sm_90a")), FamilyError);
  const CompileRequest request = reference_compile_request(test::shipped_family("attention_fwd"),
                                                           "fp16", *limits_for_arch("sm_100a"));
  EXPECT_EQ(request.arch, "sm_100a");
  EXPECT_EQ(request.kernel, "kt_attention_reference");
  EXPECT_NE(std::find(request.options.begin(), request.options.end(), "-DKT_DTYPE_FP16"),
            request.options.end());
}

}  // namespace
}  // namespace kt
