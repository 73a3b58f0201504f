// Device-side helpers of the worker, compiled once per worker with NVRTC for the device's arch:
// filling input buffers with seeded uniform values in [-1, 1], reading a buffer through L2, the
// element-wise silu(gate) * up of the unfused dual GEMM baseline and the absolute value of a
// buffer (the operands of the reference's magnitude GEMM). The
// values come from a counter-based hash of (seed, element index), so a buffer's content depends on
// the seed only, never on the launch shape, and needs no RNG state.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "worker/cuda_module.hpp"

namespace kt::cuda {

class SupportKernels {
 public:
  // Compiles the support source for arch (e.g. "sm_90a") and loads it in the current context.
  // Throws std::runtime_error with the NVRTC log if compiling fails.
  explicit SupportKernels(const std::string& arch);

  // Enqueues the fill of `elements` values uniform in [low, high) of dtype "bf16", "fp16", "f32",
  // "e4m3" or "e5m2" (fp8: truncated to a nearby value of the dtype) on stream.
  void fill_uniform(CUdeviceptr buffer, std::int64_t elements, const std::string& dtype,
                    std::uint64_t seed, CUstream stream, float low = -1.0f,
                    float high = 1.0f) const;

  // Enqueues a read of every 16-byte word of the buffer (bytes rounded down to 16), leaving its
  // lines in L2 clean; sink is a 4-byte device word the kernel may write.
  void read_through(CUdeviceptr buffer, std::size_t bytes, CUdeviceptr sink, CUstream stream) const;

  // Enqueues dst[i] = |src[i]| over `elements` values of dtype "bf16", "fp16" or "f32" (exact:
  // the sign bit cleared). dst and src may be the same buffer.
  void abs_copy(CUdeviceptr dst, CUdeviceptr src, std::int64_t elements, const std::string& dtype,
                CUstream stream) const;

  // Enqueues out[i] = silu(gate[i]) * up[i] over `elements` values of dtype "bf16" or "fp16",
  // computed in fp32 (the element-wise kernel of the unfused dual GEMM baseline).
  void silu_multiply(CUdeviceptr out, CUdeviceptr gate, CUdeviceptr up, std::int64_t elements,
                     const std::string& dtype, CUstream stream) const;

  // The device source (no host headers: NVRTC-compilable as is).
  static const char* source();
  static constexpr const char* kFillKernel = "kt_fill_uniform";
  static constexpr const char* kReadKernel = "kt_read_through";
  static constexpr const char* kSiluMultiplyKernel = "kt_silu_multiply";
  static constexpr const char* kAbsCopyKernel = "kt_abs_copy";

 private:
  Module module_;
  CUfunction fill_ = nullptr;
  CUfunction read_ = nullptr;
  CUfunction silu_multiply_ = nullptr;
  CUfunction abs_copy_ = nullptr;
};

}  // namespace kt::cuda
