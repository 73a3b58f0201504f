#include "tuner/compile/nvrtc_compiler.hpp"

#include <set>

#include <gtest/gtest.h>

#include "tuner/compile/nvrtc_program.hpp"

namespace kt {
namespace {

// A kernel with a known static shared-memory footprint (256 floats) that includes a header.
CompileRequest tiny_request(const std::string& arch) {
  CompileRequest request;
  request.source_name = "probe.cuh";
  request.source = R"(#include "probe_scale.h"
extern "C" __global__ void kt_probe(float* out, int n) {
  __shared__ float tile[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i * KT_SCALE;
  __syncthreads();
  if (i < n) out[i] = tile[255 - threadIdx.x];
}
)";
  request.headers = {{"probe_scale.h", "#pragma once\n#define KT_SCALE KT_FACTOR\n"}};
  request.kernel = "kt_probe";
  request.arch = arch;
  request.options = {"-DKT_FACTOR=2.0f"};
  return request;
}

TEST(NvrtcCompiler, VersionLooksLikeMajorDotMinor) {
  const std::string version = nvrtc_version();
  ASSERT_NE(version.find('.'), std::string::npos) << version;
  EXPECT_GE(std::stoi(version), 12);
}

class CompileForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(CompileForArch, TinyKernelCompilesWithResources) {
  const CompileRequest request = tiny_request(GetParam());
  const CompileResult result = compile_kernel(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.cubin.empty());
  EXPECT_EQ(std::string(result.cubin.begin(), result.cubin.begin() + 4),
            "\x7f"
            "ELF");
  EXPECT_GT(result.resources.registers, 0) << result.log;
  EXPECT_LE(result.resources.registers, 255);
  EXPECT_EQ(result.resources.static_smem_bytes, 1024) << result.log;
  EXPECT_EQ(result.resources.spill_store_bytes, 0);
  EXPECT_NE(result.log.find(std::string("for '") + GetParam() + "'"), std::string::npos)
      << result.log;
  EXPECT_GT(result.compile_ms, 0);
  EXPECT_EQ(result.key, compile_cache_key(request));
}

INSTANTIATE_TEST_SUITE_P(TinyKernel, CompileForArch, ::testing::Values("sm_90a", "sm_100a"));

// A family source may use the toolkit's headers: half and bfloat16 types and WMMA.
TEST(NvrtcCompiler, ToolkitHeadersAreOnTheIncludePath) {
  ASSERT_TRUE(cuda_include_dir().has_value()) << "no CUDA include folder found";
  CompileRequest request;
  request.source_name = "toolkit_headers.cu";
  request.source = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
extern "C" __global__ void kt_wmma(const __half* a, const __half* b, float* c, __nv_bfloat16* d) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
  d[threadIdx.x] = __float2bfloat16(__half2float(a[threadIdx.x]));
}
)";
  request.kernel = "kt_wmma";
  request.arch = "sm_90a";
  const CompileResult result = compile_kernel(request);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.cubin.empty());
}

TEST(NvrtcCompiler, SyntaxErrorIsAResultWithTheLog) {
  CompileRequest request = tiny_request("sm_90a");
  request.source =
      "extern \"C\" __global__ void kt_probe(float* out) { out[0] = undeclared_name; }";
  const CompileResult result = compile_kernel(request);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.cubin.empty());
  EXPECT_NE(result.log.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("undeclared_name"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("probe.cuh"), std::string::npos) << result.log;
}

TEST(NvrtcCompiler, MissingEntryPointFails) {
  CompileRequest request = tiny_request("sm_90a");
  request.kernel = "kt_not_there";
  const CompileResult result = compile_kernel(request);
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.cubin.empty());
  EXPECT_NE(result.log.find("kt_not_there"), std::string::npos) << result.log;
}

TEST(NvrtcCompiler, UnknownArchFailsWithNvrtcError) {
  const CompileResult result = compile_kernel(tiny_request("sm_999z"));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("NVRTC_ERROR"), std::string::npos) << result.log;
}

TEST(NvrtcCompiler, CacheKeyIsStableAndChangesWithEveryInput) {
  const CompileRequest base = tiny_request("sm_90a");
  const std::string key = compile_cache_key(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(compile_cache_key(base), key);
  EXPECT_EQ(compile_cache_key(tiny_request("sm_90a")), key);

  std::vector<CompileRequest> changed(8, base);
  changed[0].source += " ";
  changed[1].source_name = "other.cuh";
  changed[2].headers[0].second += "\n";
  changed[3].headers[0].first = "probe_scale2.h";
  changed[4].kernel = "kt_probe2";
  changed[5].arch = "sm_100a";
  changed[6].options = {"-DKT_FACTOR=3.0f"};
  changed[7].options = {"-DKT_FACTOR=2.0", "f"};  // same characters, other split
  std::set<std::string> keys{key};
  for (const CompileRequest& request : changed) keys.insert(compile_cache_key(request));
  EXPECT_EQ(keys.size(), changed.size() + 1);
}

TEST(NvrtcProgram, IsMoveOnlyAndReportsCompileFailures) {
  static_assert(!std::is_copy_constructible_v<NvrtcProgram>);
  static_assert(std::is_nothrow_move_constructible_v<NvrtcProgram>);
  NvrtcProgram first("extern \"C\" __global__ void k() {}", "k.cu", {});
  const nvrtcProgram handle = first.get();
  NvrtcProgram second(std::move(first));
  EXPECT_EQ(second.get(), handle);
  EXPECT_EQ(first.get(), nullptr);  // NOLINT(bugprone-use-after-move): checks the moved-from state
  EXPECT_EQ(second.compile({"-arch=sm_90a"}), "");
  EXPECT_EQ(second.compile({"--no-such-option"}), "NVRTC_ERROR_INVALID_OPTION");
}

// Captured from NVRTC 13.0 (--ptxas-options=-v, --maxrregcount=24): two entries, one spilling.
constexpr const char* kSpillingLog =
    "ptxas info    : Overriding maximum register limit 256 for 'kt_spill' with  24 of "
    "maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'kt_other' for 'sm_90a'\n"
    "ptxas info    : Function properties for kt_other\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 128 bytes smem\n"
    "ptxas info    : Compile time = 3.165 ms\n"
    "ptxas info    : Compiling entry function 'kt_spill' for 'sm_90a'\n"
    "ptxas info    : Function properties for kt_spill\n"
    "ptxas         .     1776 bytes stack frame, 2696 bytes spill stores, 2956 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 1776 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 811.989 ms\n"
    "ptxas info    : Function properties for _Z6helperf\n"
    "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n";

TEST(ParsePtxasReport, ReadsTheNamedEntryOnly) {
  const ResourceUsage spill = parse_ptxas_report(kSpillingLog, "kt_spill");
  EXPECT_EQ(spill.registers, 24);
  EXPECT_EQ(spill.stack_frame_bytes, 1776);  // not the helper's 64
  EXPECT_EQ(spill.spill_store_bytes, 2696);
  EXPECT_EQ(spill.spill_load_bytes, 2956);
  EXPECT_EQ(spill.static_smem_bytes, 0);

  const ResourceUsage other = parse_ptxas_report(kSpillingLog, "kt_other");
  EXPECT_EQ(other.registers, 10);
  EXPECT_EQ(other.static_smem_bytes, 128);
  EXPECT_EQ(other.spill_store_bytes, 0);
  EXPECT_EQ(other.stack_frame_bytes, 0);
}

TEST(ParsePtxasReport, OlderFormatWithConstantBanks) {
  const std::string log =
      "ptxas info    : Compiling entry function 'kt_gemm_mma' for 'sm_90a'\n"
      "ptxas info    : Function properties for kt_gemm_mma\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 128 registers, used 1 barriers, 32768 bytes smem, 400 bytes cmem[0], "
      "8 bytes cmem[2]\n";
  const ResourceUsage usage = parse_ptxas_report(log, "kt_gemm_mma");
  EXPECT_EQ(usage.registers, 128);
  EXPECT_EQ(usage.static_smem_bytes, 32768);
  EXPECT_EQ(usage.const_bytes, 408);
}

TEST(ParsePtxasReport, UnknownEntryOrEmptyLogSaysUnknownNotZero) {
  for (const std::string& log : {std::string(kSpillingLog), std::string()}) {
    const ResourceUsage usage = parse_ptxas_report(log, "kt_missing");
    EXPECT_EQ(usage.registers, -1);
    EXPECT_EQ(usage.spill_store_bytes, -1);
    EXPECT_EQ(usage.spill_load_bytes, -1);
    EXPECT_EQ(usage.stack_frame_bytes, -1);
    EXPECT_EQ(usage.static_smem_bytes, -1);
  }
  // A kernel whose name is a prefix of another must not pick up the other's numbers.
  EXPECT_EQ(parse_ptxas_report(kSpillingLog, "kt_spil").registers, -1);
  // A named kernel whose "Used" line omits smem and cmem has none of them.
  const ResourceUsage spill = parse_ptxas_report(kSpillingLog, "kt_spill");
  EXPECT_EQ(spill.static_smem_bytes, 0);
  EXPECT_EQ(spill.const_bytes, 0);
}

}  // namespace
}  // namespace kt
