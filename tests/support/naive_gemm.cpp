// The naive GEMM's source with its planted faults, and its problem instance (naive_gemm.hpp).
#include "support/naive_gemm.hpp"

#include <cstdint>

namespace kt::test {
namespace {

// BEHAVIOUR selects the planted fault (NaiveGemm's values).
constexpr const char* kSource = R"cuda(
#define CORRECT 0
#define WRITES_ZERO 1
#define SKIPS_LAST_ROW 2
#define WRITES_FAR_OUT_OF_BOUNDS 3
#define LOOPS_FOREVER 4
#define ONE_WRONG_ELEMENT 5
#define ONE_WRONG_TILE 6
#define WRITES_ONE_PAST_END 7
#define ONE_NAN 8
#define SPLIT_K_16BIT 9
#define DROPS_K_BLOCK 10

__device__ __forceinline__ float from_bits(unsigned short h) {
#ifdef KT_DTYPE_FP16
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  return __int_as_float(((unsigned)h) << 16);
#endif
}

__device__ __forceinline__ float load(const unsigned short* p, long long i) {
  return from_bits(p[i]);
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

__device__ __forceinline__ float round_to_dtype(float f) {
  return from_bits(store_bits(f));
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
#if BEHAVIOUR == SPLIT_K_16BIT
  // 16 slices of K, each an fp32 chain rounded to the dtype, added one after another with every
  // running sum rounded to the dtype too: a split-K reduced in the output type, correct within
  // what its 16-bit partial sums explain.
  for (int s = 0; s < 16; ++s) {
    float partial = 0.0f;
    for (int k = s * K / 16; k < (s + 1) * K / 16; ++k)
      partial += load(A, (long long)row * K + k) * load(B, (long long)col * K + k);
    acc = s == 0 ? round_to_dtype(partial) : round_to_dtype(acc + round_to_dtype(partial));
  }
#else
  // DROPS_K_BLOCK: the 16x16 tile of block (1, 1) leaves out the middle 64-wide block of K.
  const int dropped = (K / 64 / 2) * 64;
  for (int k = 0; k < K; ++k) {
#if BEHAVIOUR == DROPS_K_BLOCK
    if (blockIdx.x == 1 && blockIdx.y == 1 && k >= dropped && k < dropped + 64) continue;
#endif
    acc += load(A, (long long)row * K + k) * load(B, (long long)col * K + k);
  }
  (void)dropped;
#endif
#if BEHAVIOUR == WRITES_ZERO
  acc = 0.0f;
#elif BEHAVIOUR == ONE_WRONG_ELEMENT
  if (row == M / 2 && col == N / 2) acc += 1.0f;
#elif BEHAVIOUR == ONE_WRONG_TILE
  if (blockIdx.x == 1 && blockIdx.y == 1) acc += 1.0f;
#elif BEHAVIOUR == ONE_NAN
  if (row == 0 && col == N - 1) acc = __int_as_float(0x7fc00000);
#elif BEHAVIOUR == WRITES_ONE_PAST_END
  // A fixed value: neither of its bytes is the guard's canary, so both show as damaged.
  if (row == M - 1 && col == N - 1) C[(long long)M * N] = store_bits(1.0f);
#endif
#if BEHAVIOUR == WRITES_FAR_OUT_OF_BOUNDS
  C[(long long)row * N + col + (1ll << 40)] = store_bits(acc);
#else
  C[(long long)row * N + col] = store_bits(acc);
#endif
}
)cuda";

}  // namespace

CompileRequest naive_gemm_compile(NaiveGemm behaviour, const std::string& dtype) {
  CompileRequest request;
  request.source_name = "test_gemm.cu";
  request.source = kSource;
  request.kernel = kNaiveGemmKernel;
  request.options = {"-DBEHAVIOUR=" + std::to_string(static_cast<int>(behaviour)),
                     dtype == "fp16" ? "-DKT_DTYPE_FP16" : "-DKT_DTYPE_BF16"};
  return request;
}

ProblemInstance naive_gemm_problem(int m, int n, int k, const std::string& dtype) {
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

Tolerance naive_gemm_tolerance(const std::string& dtype) {
  // 2^-5, two half-ulps of the dtype and the magnitude term's 16: the values
  // kernel_templates/README.md explains.
  if (dtype == "fp16") return {0.03125, 0.0009765625, 0.0009765625, 16};
  return {0.03125, 0.0078125, 0.0078125, 16};
}

}  // namespace kt::test
