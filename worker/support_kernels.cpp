#include "worker/support_kernels.hpp"

#include <algorithm>
#include <stdexcept>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "worker/driver_api.hpp"

namespace kt::cuda {
namespace {

// dtype codes of the fill kernel's last argument.
constexpr int kF32 = 0, kBf16 = 1, kFp16 = 2, kE4m3 = 3, kE5m2 = 4, kE2m1x2 = 5, kUe4m3 = 6;

// The code of a dtype the element-wise kernels take; `what` names the operation in the error.
int dtype_code(const std::string& dtype, const char* what) {
  if (dtype == "f32") return kF32;
  if (dtype == "bf16") return kBf16;
  if (dtype == "fp16") return kFp16;
  if (dtype == "e4m3") return kE4m3;
  if (dtype == "e5m2") return kE5m2;
  if (dtype == "e2m1x2") return kE2m1x2;
  if (dtype == "ue4m3") return kUe4m3;
  throw std::invalid_argument(std::string("no ") + what + " for dtype '" + dtype + "'");
}

// Blocks of `threads` covering `count` elements, at most `cap` (the kernels loop over the rest).
unsigned grid_blocks(unsigned long long count, unsigned threads, unsigned long long cap) {
  return static_cast<unsigned>(std::min<unsigned long long>((count + threads - 1) / threads, cap));
}

constexpr const char* kSource = R"cuda(
// splitmix64's finalizer: a bijective mix, good enough that neighbouring counters look unrelated.
__device__ __forceinline__ unsigned long long kt_mix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// An fp8 byte near `value` (mantissa truncated, tiny values flushed to zero, large ones clamped
// to the largest finite value): any valid fp8 value will do for random inputs, since the reference
// reads the same bytes; done in integer arithmetic so the source compiles for every arch (the
// cvt to e4m3/e5m2 needs sm_89).
__device__ __forceinline__ unsigned char kt_fp8_bits(float value, int exponent_bits) {
  const unsigned bits = __float_as_uint(value);
  const unsigned sign = (bits >> 31) << 7;
  const int mantissa_bits = 7 - exponent_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int exponent = (int)((bits >> 23) & 0xFF) - 127 + bias;
  if (exponent < 1) return (unsigned char)sign;
  // e4m3 has no infinities (S.1111.111 is NaN, 448 the largest); e5m2 keeps IEEE's top exponent.
  const int top = exponent_bits == 4 ? 15 : 30;
  const unsigned top_mantissa = exponent_bits == 4 ? 6u : 3u;
  if (exponent > top) return (unsigned char)(sign | (top << mantissa_bits) | top_mantissa);
  unsigned mantissa = (bits >> (23 - mantissa_bits)) & ((1u << mantissa_bits) - 1u);
  if (exponent == top && mantissa > top_mantissa) mantissa = top_mantissa;
  return (unsigned char)(sign | ((unsigned)exponent << mantissa_bits) | mantissa);
}

// Values uniform in [low, high), stored as dtype (0 f32, 1 bf16, 2 fp16, 3 e4m3, 4 e5m2, 6 ue4m3:
// the e4m3 bits of |value|, sign bit clear); 5 e2m1x2 ignores the range: each byte is two
// random e2m1 codes, all 16 of which are finite (+-{0, 0.5, 1, 1.5, 2, 3, 4, 6}).
extern "C" __global__ void kt_fill_uniform(void* out, unsigned long long elements,
                                           unsigned long long seed, int dtype, float low,
                                           float high) {
  const unsigned long long key = kt_mix64(seed);
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    const unsigned long long bits = kt_mix64(key ^ i);
    // Top 24 bits -> [0, 1) exactly representable in f32 -> [low, high).
    const float value = low + (float)(bits >> 40) * (1.0f / 16777216.0f) * (high - low);
    if (dtype == 0) {
      ((float*)out)[i] = value;
    } else if (dtype == 5) {
      ((unsigned char*)out)[i] = (unsigned char)(bits >> 32);
    } else if (dtype == 6) {
      ((unsigned char*)out)[i] = kt_fp8_bits(fabsf(value), 4);
    } else if (dtype >= 3) {
      ((unsigned char*)out)[i] = kt_fp8_bits(value, dtype == 3 ? 4 : 5);
    } else {
      unsigned short half_bits;
      if (dtype == 1)
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(half_bits) : "f"(value));
      else
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(half_bits) : "f"(value));
      ((unsigned short*)out)[i] = half_bits;
    }
  }
}

// Reads every 16-byte word so the lines land in L2 clean; the store never happens in practice
// (the XOR would have to hit the sink's own address) but keeps the loads from being removed.
extern "C" __global__ void kt_read_through(const uint4* in, unsigned long long words,
                                           unsigned* sink) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned acc = 0;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < words; i += stride) {
    const uint4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == (unsigned)(unsigned long long)sink) *sink = acc;
}

// dst[i] = |src[i]|: bf16 and fp16 keep the sign in bit 15 and f32 in bit 31, so clearing it is
// the exact absolute value (the operands of the reference's magnitude GEMM, |A| |B|^T).
extern "C" __global__ void kt_abs_copy(void* dst, const void* src, unsigned long long elements,
                                       int dtype) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    if (dtype == 0)
      ((unsigned*)dst)[i] = ((const unsigned*)src)[i] & 0x7FFFFFFFu;
    else
      ((unsigned short*)dst)[i] = ((const unsigned short*)src)[i] & 0x7FFFu;
  }
}

// out[i] = silu(gate[i]) * up[i] for 16-bit data (dtype 1 bf16, 2 fp16), in fp32 with an exact
// expf: the element-wise half of the unfused dual GEMM baseline, as a framework runs it.
__device__ __forceinline__ float kt_half_to_float(unsigned short bits, int dtype) {
  float value;
  if (dtype == 1)
    value = __uint_as_float((unsigned)bits << 16);
  else
    asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
}

extern "C" __global__ void kt_silu_multiply(unsigned short* out, const unsigned short* gate,
                                            const unsigned short* up,
                                            unsigned long long elements, int dtype) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    const float g = kt_half_to_float(gate[i], dtype), u = kt_half_to_float(up[i], dtype);
    const float value = g / (1.0f + expf(-g)) * u;
    unsigned short bits;
    if (dtype == 1)
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(value));
    else
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(value));
    out[i] = bits;
  }
}
)cuda";

Module compile_and_load(const std::string& arch) {
  CompileRequest request;
  request.source_name = "kt_support.cu";
  request.source = kSource;
  request.kernel = SupportKernels::kFillKernel;
  request.arch = arch;
  const CompileResult compiled = compile_kernel(request);
  if (!compiled.ok)
    throw std::runtime_error("compiling the worker's support kernels for " + arch + " failed:\n" +
                             compiled.log);
  return Module(compiled.cubin);
}

}  // namespace

SupportKernels::SupportKernels(const std::string& arch)
    : module_(compile_and_load(arch)),
      fill_(module_.function(kFillKernel)),
      read_(module_.function(kReadKernel)),
      silu_multiply_(module_.function(kSiluMultiplyKernel)),
      abs_copy_(module_.function(kAbsCopyKernel)) {}

const char* SupportKernels::source() {
  return kSource;
}

void SupportKernels::fill_uniform(CUdeviceptr buffer, std::int64_t elements,
                                  const std::string& dtype, std::uint64_t seed, CUstream stream,
                                  float low, float high) const {
  int code = dtype_code(dtype, "random fill");
  if (elements <= 0) return;
  unsigned long long count = static_cast<unsigned long long>(elements);
  unsigned long long seed_arg = seed;
  void* args[] = {&buffer, &count, &seed_arg, &code, &low, &high};
  constexpr unsigned kThreads = 256;
  KT_CU(cuLaunchKernel, fill_, grid_blocks(count, kThreads, 8192), 1, 1, kThreads, 1, 1, 0, stream,
        args, nullptr);
}

void SupportKernels::read_through(CUdeviceptr buffer, std::size_t bytes, CUdeviceptr sink,
                                  CUstream stream) const {
  unsigned long long words = bytes / 16;
  if (words == 0) return;
  void* args[] = {&buffer, &words, &sink};
  constexpr unsigned kThreads = 512;
  const auto blocks =
      static_cast<unsigned>(std::min<unsigned long long>((words + kThreads - 1) / kThreads, 4096));
  KT_CU(cuLaunchKernel, read_, blocks, 1, 1, kThreads, 1, 1, 0, stream, args, nullptr);
}

void SupportKernels::abs_copy(CUdeviceptr dst, CUdeviceptr src, std::int64_t elements,
                              const std::string& dtype, CUstream stream) const {
  int code = dtype_code(dtype, "absolute value");
  if (elements <= 0) return;
  unsigned long long count = static_cast<unsigned long long>(elements);
  void* args[] = {&dst, &src, &count, &code};
  constexpr unsigned kThreads = 256;
  KT_CU(cuLaunchKernel, abs_copy_, grid_blocks(count, kThreads, 8192), 1, 1, kThreads, 1, 1, 0,
        stream, args, nullptr);
}

void SupportKernels::silu_multiply(CUdeviceptr out, CUdeviceptr gate, CUdeviceptr up,
                                   std::int64_t elements, const std::string& dtype,
                                   CUstream stream) const {
  int code;
  if (dtype == "bf16")
    code = kBf16;
  else if (dtype == "fp16")
    code = kFp16;
  else
    throw std::invalid_argument("no silu multiply for dtype '" + dtype + "'");
  if (elements <= 0) return;
  unsigned long long count = static_cast<unsigned long long>(elements);
  void* args[] = {&out, &gate, &up, &count, &code};
  constexpr unsigned kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<unsigned long long>((count + kThreads - 1) / kThreads, 8192));
  KT_CU(cuLaunchKernel, silu_multiply_, blocks, 1, 1, kThreads, 1, 1, 0, stream, args, nullptr);
}

}  // namespace kt::cuda
