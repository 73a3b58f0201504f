// The measurement worker on a real GPU, through the daemon's client: small GEMM kernels compiled
// here with NVRTC (argument order C, A, B, M, N, K like the GEMM family) that are right, wrong,
// fault, hang or ask for too much, and the state each one must end in.
#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "engine/worker_client.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

// One thread per C element; BEHAVIOUR selects a planted bug.
constexpr const char* kGemmSource = R"cuda(
#define CORRECT 0
#define WRITES_ZERO 1
#define SKIPS_LAST_ROW 2
#define WRITES_FAR_OUT_OF_BOUNDS 3
#define LOOPS_FOREVER 4

__device__ __forceinline__ float load(const unsigned short* p, long long i) {
#ifdef KT_DTYPE_FP16
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
  return f;
#else
  return __int_as_float(((unsigned)p[i]) << 16);
#endif
}

__device__ __forceinline__ unsigned short store_bits(float f) {
  unsigned short h;
#ifdef KT_DTYPE_FP16
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
  return h;
}

extern "C" __global__ void test_gemm(unsigned short* C, const unsigned short* A,
                                     const unsigned short* B, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
#if BEHAVIOUR == LOOPS_FOREVER
  for (;;) asm volatile("nanosleep.u32 1000;");
#endif
  if (row >= M || col >= N) return;
#if BEHAVIOUR == SKIPS_LAST_ROW
  if (row == M - 1) return;
#endif
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += load(A, (long long)row * K + k) * load(B, (long long)col * K + k);
#if BEHAVIOUR == WRITES_ZERO
  acc = 0.0f;
#endif
#if BEHAVIOUR == WRITES_FAR_OUT_OF_BOUNDS
  C[(long long)row * N + col + (1ll << 40)] = store_bits(acc);
#else
  C[(long long)row * N + col] = store_bits(acc);
#endif
}
)cuda";

enum class Behaviour { correct = 0, writes_zero, skips_last_row, far_out_of_bounds, loops_forever };

ProblemInstance gemm_problem(int m, int n, int k, const std::string& dtype) {
  ProblemInstance p;
  p.shape = {{"M", m}, {"N", n}, {"K", k}};
  p.dtype = dtype;
  p.buffers = {{"A", "input", dtype, std::int64_t{m} * k},
               {"B", "input", dtype, std::int64_t{n} * k},
               {"C", "output", dtype, std::int64_t{m} * n}};
  auto buffer_arg = [](const char* name) {
    ArgInstance a;
    a.buffer = name;
    return a;
  };
  auto int_arg = [](int value) {
    ArgInstance a;
    a.kind = ArgInstance::Kind::i32;
    a.value = value;
    return a;
  };
  p.args = {buffer_arg("C"), buffer_arg("A"), buffer_arg("B"), int_arg(m), int_arg(n), int_arg(k)};
  p.launch.block = {16, 16, 1};
  p.launch.grid = {static_cast<std::uint32_t>((n + 15) / 16),
                   static_cast<std::uint32_t>((m + 15) / 16), 1};
  p.reference.kind = "cublas_gemm";
  p.reference.params = {{"a", "A"}, {"b", "B"}, {"c", "C"}, {"m", m}, {"n", n}, {"k", k}};
  p.flops = 2.0 * m * n * k;
  return p;
}

// Needs no GPU: every planted behaviour compiles, for both dtypes.
TEST(WorkerTestKernels, CompileWithNvrtc) {
  for (int behaviour = 0; behaviour <= static_cast<int>(Behaviour::loops_forever); ++behaviour) {
    for (const char* dtype : {"-DKT_DTYPE_BF16", "-DKT_DTYPE_FP16"}) {
      CompileRequest request;
      request.source_name = "test_gemm.cu";
      request.source = kGemmSource;
      request.kernel = "test_gemm";
      request.arch = "sm_90a";
      request.options = {"-DBEHAVIOUR=" + std::to_string(behaviour), dtype};
      const CompileResult compiled = compile_kernel(request);
      EXPECT_TRUE(compiled.ok) << behaviour << " " << dtype << ":\n" << compiled.log;
    }
  }
}

class WorkerOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    probe_ = new ProbeResult(probe_devices(test::binary_dir() / "kerntune-worker"));
  }
  static void TearDownTestSuite() {
    delete probe_;
    probe_ = nullptr;
  }

  void SetUp() override {
    if (probe_->devices.empty()) GTEST_SKIP() << "no CUDA device: " << probe_->error;
    device_ = probe_->devices.front();
    client_ =
        std::make_unique<WorkerClient>(test::binary_dir() / "kerntune-worker", device_.ordinal);
  }

  // Compiles the test GEMM with a planted behaviour; returns the cubin's path.
  std::string cubin(Behaviour behaviour, const std::string& dtype = "bf16") {
    CompileRequest request;
    request.source_name = "test_gemm.cu";
    request.source = kGemmSource;
    request.kernel = "test_gemm";
    request.arch = device_.arch;
    request.options = {"-DBEHAVIOUR=" + std::to_string(static_cast<int>(behaviour)),
                       dtype == "fp16" ? "-DKT_DTYPE_FP16" : "-DKT_DTYPE_BF16"};
    const CompileResult compiled = compile_kernel(request);
    EXPECT_TRUE(compiled.ok) << compiled.log;
    const auto path = dir_.path() / ("gemm_" + std::to_string(static_cast<int>(behaviour)) + "_" +
                                     dtype + ".cubin");
    std::ofstream(path, std::ios::binary)
        .write(compiled.cubin.data(), static_cast<std::streamsize>(compiled.cubin.size()));
    return path.string();
  }

  MeasureRequest request(Behaviour behaviour, const std::string& dtype = "bf16") {
    MeasureRequest r;
    r.variant_id = static_cast<int>(behaviour) + 1;
    r.cubin_path = cubin(behaviour, dtype);
    r.kernel = "test_gemm";
    r.smoke = gemm_problem(67, 45, 40, dtype);  // ragged: not a multiple of the 16x16 tile
    r.full = gemm_problem(257, 193, 136, dtype);
    r.tolerance = dtype == "fp16" ? 5e-3 : 1e-2;
    r.seed = 1234;
    r.timing.warmup_runs = 2;
    r.timing.min_trials = 10;
    r.timing.max_trials = 200;
    r.timing.max_seconds = 1.0;
    return r;
  }

  static ProbeResult* probe_;
  DeviceInfo device_;
  test::TempDir dir_;
  std::unique_ptr<WorkerClient> client_;
};

ProbeResult* WorkerOnGpu::probe_ = nullptr;

TEST_F(WorkerOnGpu, ProbeDescribesTheDevice) {
  EXPECT_TRUE(probe_->driver_found);
  EXPECT_GT(device_.sm_count, 0);
  EXPECT_GT(device_.l2_bytes, 0);
  EXPECT_GT(device_.smem_per_block_optin, 48 * 1024);
  EXPECT_GE(device_.driver_version, 12000);
  EXPECT_EQ(device_.uuid.rfind("GPU-", 0), 0u);
}

TEST_F(WorkerOnGpu, CorrectKernelIsMeasuredWithTiming) {
  for (const std::string dtype : {"bf16", "fp16"}) {
    const MeasureResult r = client_->measure(request(Behaviour::correct, dtype), 60s);
    ASSERT_EQ(r.status, VariantStatus::measured)
        << dtype << ": " << r.failed_gate << ": " << r.reason;
    ASSERT_TRUE(r.timing.has_value());
    EXPECT_GE(r.timing->trials, 10);
    EXPECT_GT(r.timing->median_us, 0);
    EXPECT_LE(r.timing->min_us, r.timing->median_us);
    EXPECT_LE(r.timing->p10_us, r.timing->median_us);
    EXPECT_GE(r.timing->p90_us, r.timing->median_us);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->non_finite, 0);
    EXPECT_LT(r.error->rel_l2, dtype == "fp16" ? 5e-3 : 1e-2);
    EXPECT_GT(r.registers, 0);
  }
  EXPECT_EQ(client_->starts(), 1);
}

TEST_F(WorkerOnGpu, ZeroOutputIsAWrongResultAtTheSmokeGate) {
  const MeasureResult r = client_->measure(request(Behaviour::writes_zero), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  EXPECT_EQ(r.failed_gate, "smoke");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NEAR(r.error->rel_l2, 1.0, 1e-6);
  EXPECT_FALSE(r.timing.has_value());
}

TEST_F(WorkerOnGpu, UnwrittenLastRowLeavesPoisonAndIsAWrongResult) {
  const MeasureResult r = client_->measure(request(Behaviour::skips_last_row), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.reason;
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->non_finite, 45);  // the smoke instance's last row of C
  EXPECT_EQ(r.error->first_bad_index, 66 * 45);
}

TEST_F(WorkerOnGpu, FarOutOfBoundsWriteIsIllegalAccessAndTheNextVariantStillRuns) {
  const MeasureResult bad = client_->measure(request(Behaviour::far_out_of_bounds), 60s);
  EXPECT_EQ(bad.status, VariantStatus::illegal_access) << bad.reason;
  const MeasureResult good = client_->measure(request(Behaviour::correct), 60s);
  EXPECT_EQ(good.status, VariantStatus::measured) << good.reason;
  EXPECT_EQ(client_->starts(), 2);  // a fresh worker after the lost context
}

TEST_F(WorkerOnGpu, EndlessLoopIsAHangAndTheNextVariantStillRuns) {
  ASSERT_EQ(client_->measure(request(Behaviour::correct), 60s).status, VariantStatus::measured);
  const auto begin = std::chrono::steady_clock::now();
  const MeasureResult hung = client_->measure(request(Behaviour::loops_forever), 3s);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 30s);
  EXPECT_EQ(hung.status, VariantStatus::hang) << hung.reason;
  const MeasureResult good = client_->measure(request(Behaviour::correct), 60s);
  EXPECT_EQ(good.status, VariantStatus::measured) << good.reason;
  EXPECT_EQ(client_->starts(), 2);
}

TEST_F(WorkerOnGpu, TooManyThreadsOrTooMuchSharedMemoryIsResourceExceeded) {
  MeasureRequest r = request(Behaviour::correct);
  r.full.launch.block = {64, 32, 1};  // 2048 threads
  MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::resource_exceeded) << result.reason;
  EXPECT_EQ(result.failed_gate, "resources");

  r = request(Behaviour::correct);
  r.full.launch.dynamic_smem = static_cast<std::uint32_t>(device_.smem_per_block_optin + 1024);
  result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::resource_exceeded) << result.reason;
  EXPECT_EQ(client_->starts(), 1);
}

TEST_F(WorkerOnGpu, MissingKernelOrCubinIsALaunchFailureAtLoad) {
  MeasureRequest r = request(Behaviour::correct);
  r.kernel = "no_such_kernel";
  MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed) << result.reason;
  EXPECT_EQ(result.failed_gate, "load");
  r = request(Behaviour::correct);
  r.cubin_path = (dir_.path() / "missing.cubin").string();
  result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed);
  EXPECT_EQ(result.failed_gate, "load");
}

TEST_F(WorkerOnGpu, ClusterLaunchOfAnInvalidShapeIsALaunchFailure) {
  if (device_.sm_major < 9) GTEST_SKIP() << "thread-block clusters need sm_90+";
  MeasureRequest r = request(Behaviour::correct);
  r.smoke.reset();
  r.full.launch.cluster = {3, 1, 1};  // grid.x (13) is not a multiple of 3
  const MeasureResult result = client_->measure(r, 60s);
  EXPECT_EQ(result.status, VariantStatus::launch_failed) << result.reason;
  EXPECT_EQ(result.failed_gate, "full");
}

TEST_F(WorkerOnGpu, ReferenceIsTimed) {
  ReferenceTimingRequest r;
  r.problem = gemm_problem(1024, 1024, 1024, "bf16");
  r.timing.min_trials = 10;
  r.timing.max_seconds = 1.0;
  std::string reason;
  const auto timing = client_->time_reference(r, 60s, &reason);
  ASSERT_TRUE(timing.has_value()) << reason;
  EXPECT_GE(timing->trials, 10);
  EXPECT_GT(timing->median_us, 0.5);  // 2 GFLOP takes longer than that on any GPU
}

}  // namespace
}  // namespace kt
