// read_cubin_resources and kernel_resources against real NVRTC output: for kernels that use many
// registers, static shared memory of several alignments, a spilling register cap, a local array
// in a non-inlined callee and dynamic shared memory only, the cubin gives the figures the ptxas
// log gives (NVRTC here prints the log); without a log the cubin alone still reports them, with
// spills unknown only where there is a stack frame; and damaged files are refused with
// CubinError, never read past their end.
#include "tuner/compile/cubin_resources.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

struct ProbeKernel {
  const char* kernel;
  const char* source;
  std::vector<std::string> options;
};

// Each one is a case the reader must get right; the comments say which.
const std::vector<ProbeKernel>& probe_kernels() {
  static const std::vector<ProbeKernel> all = {
      {"kt_small",  // few registers, no shared memory
       R"(extern "C" __global__ void kt_small(float* a, float b) { a[threadIdx.x] *= b; })",
       {}},
      {"kt_smem",  // 4000 + 616 bytes of static shared memory, 8-byte aligned
       R"(extern "C" __global__ void kt_smem(float* a) {
  __shared__ float tile[1000];
  __shared__ double other[77];
  tile[threadIdx.x] = a[threadIdx.x];
  other[threadIdx.x % 77] = a[threadIdx.x + 1];
  __syncthreads();
  a[threadIdx.x] = tile[(threadIdx.x + 1) % 1000] + other[(threadIdx.x + 3) % 77];
})",
       {}},
      {"kt_odd_smem",  // 3 bytes, and a 1024-byte aligned array after a 128-byte aligned one
       R"(extern "C" __global__ void kt_odd_smem(float* a) {
  __shared__ char c[3];
  __shared__ __align__(128) char buf[8];
  __shared__ __align__(1024) float big[3];
  c[threadIdx.x % 3] = a[threadIdx.x];
  buf[threadIdx.x & 7] = a[threadIdx.x + 2];
  big[threadIdx.x % 3] = a[threadIdx.x + 1];
  __syncthreads();
  a[threadIdx.x] = c[(threadIdx.x + 1) % 3] + buf[(threadIdx.x + 1) & 7] + big[threadIdx.x % 3];
})",
       {}},
      {"kt_dynamic_only",  // extern __shared__ only: no static shared memory at all
       R"(extern "C" __global__ void kt_dynamic_only(float* a) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
})",
       {}},
      {"kt_many_registers",  // 160 live accumulators: over 200 registers
       R"(extern "C" __global__ void kt_many_registers(const float* __restrict__ a,
                                                float* __restrict__ out, int n) {
  float acc[160];
#pragma unroll
  for (int i = 0; i < 160; ++i) acc[i] = a[threadIdx.x + i];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < 160; ++i) acc[i] = acc[i] * acc[(i + 1) % 160] + a[k * 160 + i];
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 160; ++i) s += acc[i] * (i + 1);
  out[threadIdx.x] = s;
})",
       {}},
      {"kt_many_registers",  // the same capped at 32 registers: it spills into a stack frame
       nullptr,
       {"--maxrregcount=32"}},
      {"kt_calls_helper",  // a non-inlined callee with a local array, beside a second kernel
       R"(__device__ __noinline__ float helper(float* p, int i) {
  float local[32];
  for (int j = 0; j < 32; ++j) local[j] = p[j] * i;
  return local[i & 31];
}
extern "C" __global__ void kt_calls_helper(float* a) {
  __shared__ float s[256];
  s[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  a[threadIdx.x] = helper(s, threadIdx.x);
}
extern "C" __global__ void kt_calls_helper_not(float* a, int i) { a[i] = a[i + 1] * 2; })",
       {}},
  };
  return all;
}

CompileRequest request_for(const ProbeKernel& probe, const std::string& arch) {
  CompileRequest request;
  request.source_name = std::string(probe.kernel) + ".cu";
  // The spilling variant reuses the source of the entry before it.
  const ProbeKernel* with_source = &probe;
  while (with_source->source == nullptr) --with_source;
  request.source = with_source->source;
  request.kernel = probe.kernel;
  request.arch = arch;
  request.options = probe.options;
  return request;
}

std::string describe(const ProbeKernel& probe, const std::string& arch) {
  std::string text = std::string(probe.kernel) + " for " + arch;
  for (const std::string& option : probe.options) text += " " + option;
  return text;
}

class CubinAgreesWithPtxas : public ::testing::TestWithParam<const char*> {};

TEST_P(CubinAgreesWithPtxas, RegistersSharedMemoryAndStackFrameForEveryProbe) {
  const std::string arch = GetParam();
  for (const ProbeKernel& probe : probe_kernels()) {
    const std::string what = describe(probe, arch);
    const CompileResult compiled = compile_kernel(request_for(probe, arch));
    ASSERT_TRUE(compiled.ok) << what << ":\n" << compiled.log;
    const ResourceUsage logged = parse_ptxas_report(compiled.log, probe.kernel);
    ASSERT_GT(logged.registers, 0) << what << ": NVRTC here prints the ptxas log\n" << compiled.log;
    const CubinKernelResources cubin = read_cubin_resources(compiled.cubin, probe.kernel);
    EXPECT_EQ(cubin.registers, logged.registers) << what << "\n" << compiled.log;
    EXPECT_EQ(cubin.static_smem_bytes, logged.static_smem_bytes) << what << "\n" << compiled.log;
    EXPECT_EQ(cubin.stack_frame_bytes, logged.stack_frame_bytes) << what << "\n" << compiled.log;
    EXPECT_EQ(cubin.sm, std::stoi(arch.substr(3))) << what;  // "sm_90a" -> 90
    // What compile_kernel stored: the same, spills from the log, and no disagreement noted.
    EXPECT_EQ(compiled.resources.registers, cubin.registers) << what;
    EXPECT_EQ(compiled.resources.static_smem_bytes, cubin.static_smem_bytes) << what;
    EXPECT_EQ(compiled.resources.spill_store_bytes, logged.spill_store_bytes) << what;
    EXPECT_EQ(compiled.resources.spill_load_bytes, logged.spill_load_bytes) << what;
    EXPECT_EQ(compiled.log.find("disagree"), std::string::npos) << what << "\n" << compiled.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CubinAgreesWithPtxas,
                         ::testing::Values("sm_80", "sm_90a", "sm_100a"));

// The probes do what their comments say, so the agreement above covers those cases.
TEST(CubinResources, ProbesCoverManyRegistersSharedMemorySpillsAndFrames) {
  const auto read = [](std::size_t index) {
    const ProbeKernel& probe = probe_kernels()[index];
    const CompileResult compiled = compile_kernel(request_for(probe, "sm_90a"));
    EXPECT_TRUE(compiled.ok) << compiled.log;
    return std::pair{read_cubin_resources(compiled.cubin, probe.kernel), compiled};
  };
  EXPECT_EQ(read(1).first.static_smem_bytes, 1000 * 4 + 77 * 8);
  EXPECT_EQ(read(3).first.static_smem_bytes, 0);
  EXPECT_GT(read(4).first.registers, 200);
  const auto [spilling, spilling_compile] = read(5);
  EXPECT_LE(spilling.registers, 32);
  EXPECT_GT(spilling.stack_frame_bytes, 0);
  EXPECT_GT(spilling_compile.resources.spill_store_bytes, 0) << spilling_compile.log;
  EXPECT_GT(read(6).first.stack_frame_bytes, 0);
}

TEST(KernelResources, WithoutALogTheCubinStillSaysAndSpillsAreUnknownOnlyWithAFrame) {
  for (std::size_t index : {std::size_t{1}, std::size_t{5}}) {
    const ProbeKernel& probe = probe_kernels()[index];
    const CompileResult compiled = compile_kernel(request_for(probe, "sm_90a"));
    ASSERT_TRUE(compiled.ok) << compiled.log;
    const ResourceReport without_log = kernel_resources(compiled.cubin, probe.kernel, "");
    const ResourceUsage& usage = without_log.usage;
    EXPECT_EQ(usage.registers, compiled.resources.registers);
    EXPECT_EQ(usage.static_smem_bytes, compiled.resources.static_smem_bytes);
    EXPECT_EQ(usage.stack_frame_bytes, compiled.resources.stack_frame_bytes);
    EXPECT_TRUE(without_log.disagreement.empty()) << without_log.disagreement;
    if (usage.stack_frame_bytes == 0) {
      EXPECT_EQ(usage.spill_store_bytes, 0) << "no frame, nowhere to spill";
      EXPECT_EQ(usage.spill_load_bytes, 0);
    } else {
      EXPECT_EQ(usage.spill_store_bytes, -1) << "a frame, and no log to say what is in it";
      EXPECT_EQ(usage.spill_load_bytes, -1);
    }
  }
}

TEST(KernelResources, ALogThatDisagreesLosesToTheCubinAndIsNoted) {
  const ProbeKernel& probe = probe_kernels()[0];
  const CompileResult compiled = compile_kernel(request_for(probe, "sm_90a"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const std::string wrong_log =
      "ptxas info    : Compiling entry function 'kt_small' for 'sm_90a'\n"
      "ptxas info    : Function properties for kt_small\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 250 registers, used 0 barriers, 64 bytes smem\n";
  const ResourceReport report = kernel_resources(compiled.cubin, probe.kernel, wrong_log);
  EXPECT_EQ(report.usage.registers, compiled.resources.registers);
  EXPECT_NE(report.usage.registers, 250);
  EXPECT_NE(report.disagreement.find("registers: ptxas log 250"), std::string::npos)
      << report.disagreement;
  EXPECT_NE(report.disagreement.find("static shared memory: ptxas log 64, cubin 0"),
            std::string::npos)
      << report.disagreement;
  EXPECT_EQ(report.usage.spill_store_bytes, 0);  // the log's spills are still used
}

TEST(KernelResources, AKernelNotInTheCubinIsAnError) {
  const CompileResult compiled = compile_kernel(request_for(probe_kernels()[6], "sm_90a"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  EXPECT_GT(read_cubin_resources(compiled.cubin, "kt_calls_helper_not").registers, 0)
      << "the second kernel of the program has its own count";
  for (const char* missing : {"kt_calls", "kt_calls_helperx", "helper", ""}) {
    try {
      read_cubin_resources(compiled.cubin, missing);
      ADD_FAILURE() << "found '" << missing << "'";
    } catch (const CubinError& e) {
      EXPECT_NE(std::string(e.what()).find("no function symbol"), std::string::npos) << e.what();
    }
  }
}

// Reads `bytes`; a CubinError is a fine answer, anything else (or a crash) is not.
void expect_reads_or_refuses(const std::vector<char>& bytes, const std::string& what) {
  try {
    read_cubin_resources(bytes, "kt_smem");
  } catch (const CubinError&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

std::string error_of(const std::vector<char>& bytes, const std::string& kernel = "kt_smem") {
  try {
    read_cubin_resources(bytes, kernel);
  } catch (const CubinError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(CubinResources, DamagedFilesAreRefusedWithoutReadingPastTheirEnd) {
  const CompileResult compiled = compile_kernel(request_for(probe_kernels()[1], "sm_90a"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const std::vector<char>& good = compiled.cubin;
  ASSERT_EQ(read_cubin_resources(good, "kt_smem").static_smem_bytes, 4616);

  EXPECT_NE(error_of({}).find("not an ELF file"), std::string::npos);
  EXPECT_NE(error_of(std::vector<char>(200, 'x')).find("not an ELF file"), std::string::npos);
  std::vector<char> other_machine = good;
  other_machine[18] = 62;  // EM_X86_64
  other_machine[19] = 0;
  EXPECT_NE(error_of(other_machine).find("EM_CUDA"), std::string::npos);
  std::vector<char> elf32 = good;
  elf32[4] = 1;
  EXPECT_NE(error_of(elf32).find("ELF64"), std::string::npos);
  std::vector<char> far_table = good;
  far_table[0x28 + 5] = 0x7f;  // e_shoff far beyond the file
  EXPECT_NE(error_of(far_table).find("truncated"), std::string::npos) << error_of(far_table);

  // Every truncation, and every byte of the headers and section table set to 0xff or 0.
  for (std::size_t size = 0; size < good.size(); ++size)
    expect_reads_or_refuses(std::vector<char>(good.begin(), good.begin() + size),
                            "truncated to " + std::to_string(size));
  std::uint64_t table = 0;
  std::memcpy(&table, good.data() + 0x28, sizeof(table));
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < 64; ++i) positions.push_back(i);
  for (std::size_t i = table; i < good.size(); ++i) positions.push_back(i);
  for (std::size_t i : positions) {
    for (char value : {'\xff', '\0'}) {
      std::vector<char> damaged = good;
      damaged[i] = value;
      expect_reads_or_refuses(damaged, "byte " + std::to_string(i));
    }
  }
}

TEST(CubinResources, DamagedAttributeRecordsAreRefused) {
  const CompileResult compiled = compile_kernel(request_for(probe_kernels()[1], "sm_90a"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const std::vector<char>& good = compiled.cubin;
  // Find .nv.info's bytes: its first record is EIATTR_REGCOUNT (04 2f 08 00).
  const char regcount[] = {'\x04', '\x2f', '\x08', '\x00'};
  const auto record =
      std::search(good.begin(), good.end(), std::begin(regcount), std::end(regcount));
  ASSERT_NE(record, good.end());
  const std::size_t at = static_cast<std::size_t>(record - good.begin());

  std::vector<char> bad_format = good;
  bad_format[at] = 9;
  EXPECT_NE(error_of(bad_format).find("unknown record format"), std::string::npos)
      << error_of(bad_format);
  std::vector<char> long_payload = good;
  long_payload[at + 3] = '\x7f';  // a payload of 32 KiB runs off the section
  EXPECT_NE(error_of(long_payload).find("outside"), std::string::npos) << error_of(long_payload);
  std::vector<char> zero_registers = good;
  std::memset(zero_registers.data() + at + 8, 0, 4);
  EXPECT_EQ(read_cubin_resources(zero_registers, "kt_smem").registers, 0);
  try {
    kernel_resources(zero_registers, "kt_smem", "");
    ADD_FAILURE() << "0 registers accepted";
  } catch (const CubinError& e) {
    EXPECT_NE(std::string(e.what()).find("0 registers"), std::string::npos) << e.what();
  }
  for (std::size_t i = at; i < at + 36 && i < good.size(); ++i) {
    std::vector<char> damaged = good;
    damaged[i] = '\xff';
    expect_reads_or_refuses(damaged, "nv.info byte " + std::to_string(i - at));
  }
}

}  // namespace
}  // namespace kt
