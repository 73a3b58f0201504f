#include "support/fault_family.hpp"

#include <fstream>
#include <stdexcept>

namespace kt::test {
namespace {

void write_file(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// One thread per C element; the block shape comes from the launch, so every correct variant
// computes the same result with another tiling.
constexpr const char* kSource = R"cuda(
#if KT_BEHAVIOUR == 1
#error "planted compile error"
#endif

__device__ __forceinline__ float load(const unsigned short* p, long long i) {
  return __int_as_float(((unsigned)p[i]) << 16);
}

__device__ __forceinline__ unsigned short store_bits(float f) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

extern "C" __global__ void planted_gemm(unsigned short* C, const unsigned short* A,
                                        const unsigned short* B, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
#if KT_BEHAVIOUR == 5
  for (;;) asm volatile("nanosleep.u32 1000;");
#endif
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += load(A, (long long)row * K + k) * load(B, (long long)col * K + k);
#if KT_BEHAVIOUR == 6
  acc = 0.0f;
#endif
#if KT_BEHAVIOUR == 4
  C[(long long)row * N + col + (1ll << 40)] = store_bits(acc);
#else
  C[(long long)row * N + col] = store_bits(acc);
#endif
}
)cuda";

// Block extents per behaviour: 16x16, except the two other correct tilings and the oversized one.
constexpr const char* kBlockX =
    "BEHAVIOUR == 2 ? 64 : (BEHAVIOUR == 7 ? 32 : (BEHAVIOUR == 8 ? 8 : 16))";
constexpr const char* kBlockY =
    "BEHAVIOUR == 2 ? 32 : (BEHAVIOUR == 7 ? 8 : (BEHAVIOUR == 8 ? 32 : 16))";

std::string manifest() {
  const std::string bx = kBlockX, by = kBlockY;
  return R"json({
  "name": "faults",
  "description": "test only: C = A * B^T in bf16, one variant per planted fault",
  "dims": {"M": {"min": 1, "max": 65536}, "N": {"min": 1, "max": 65536},
           "K": {"min": 1, "max": 65536}},
  "dtypes": ["bf16"],
  "smoke_shape": {"M": 67, "N": 45, "K": 40},
  "flops": "2*M*N*K",
  "bytes": "(M*K + N*K + M*N) * elem_bytes",
  "buffers": [
    {"name": "A", "role": "input", "dtype": "in", "elements": "M*K"},
    {"name": "B", "role": "input", "dtype": "in", "elements": "N*K"},
    {"name": "C", "role": "output", "dtype": "in", "elements": "M*N"}
  ],
  "args": [{"buffer": "C"}, {"buffer": "A"}, {"buffer": "B"}, {"i32": "M"}, {"i32": "N"},
           {"i32": "K"}],
  "reference": {"kind": "cublas_gemm", "a": "A", "b": "B", "c": "C", "m": "M", "n": "N",
                "k": "K"},
  "tolerance": {"bf16": {"atol": 0.03125, "rtol": 0.0078125, "rel_l2": 0.0078125}},
  "templates": [{
    "name": "planted",
    "source": "planted.cuh",
    "kernel": "planted_gemm",
    "archs": ["sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a"],
    "axes": {"BEHAVIOUR": {"values": [0, 1, 2, 3, 4, 5, 6, 7, 8]},
             "COPY": {"values": [0, 1, 2, 3],
                      "description": "changes nothing but the compile key: more variants"}},
    "launch": {
      "grid": ["cdiv(N, )json" +
         bx + R"json()", "cdiv(M, )json" + by + R"json()", "1"],
      "block": [")json" +
         bx + R"json(", ")json" + by + R"json(", "1"],
      "cluster": ["BEHAVIOUR == 3 ? 3 : 1", "1", "1"]
    }
  }]
})json";
}

}  // namespace

std::string expected_status(PlantedFault fault) {
  switch (fault) {
    case PlantedFault::correct:
    case PlantedFault::correct_wide:
    case PlantedFault::correct_tall:
      return "measured";
    case PlantedFault::compile_error:
      return "compile_error";
    case PlantedFault::too_many_threads:
      return "resource_exceeded";
    case PlantedFault::bad_cluster:
      return "launch_failed";
    case PlantedFault::illegal_access:
      return "illegal_access";
    case PlantedFault::hang:
      return "hang";
    case PlantedFault::wrong_result:
      return "wrong_result";
  }
  return "?";
}

void write_fault_family(const std::filesystem::path& root) {
  const auto dir = root / "faults";
  std::filesystem::create_directories(dir);
  write_file(dir / "manifest.json", manifest());
  write_file(dir / "planted.cuh", kSource);
}

}  // namespace kt::test
