// The wgmma (sm_90a) inner step of the skinny GEMM: a warpgroup multiplies 64 weight rows by its
// WM tokens with wgmma.mma_async m64nWMk16, both operands straight from the cp.async ring. The
// ring's XOR swizzle of 64-element (128-byte) rows, chunk ^ (row & 7) from 1024-byte aligned
// tiles, is exactly the 128B swizzle of a K-major wgmma operand, so no copy or re-layout is
// needed. The accumulator layout per warp equals that of mma.sync m16n8 over WM/8 tiles, so the
// epilogue is shared with the mma.sync path.
#pragma once

#include "gemm_skinny_config.cuh"
#include "hopper_primitives.cuh"
#include "hopper_wgmma_ops.cuh"

namespace kt_skinny {

template <class Cfg>
struct WgmmaTile;  // defined only where wgmma exists; other archs never instantiate it

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <class Cfg>
struct WgmmaTile {
  // acc is the warp's float[1][WM/8][4]; weight_rows / tokens: shared addresses of the
  // warpgroup's first weight row and first token in this stage; k steps warp_k, +WARPS_K, ...
  template <class Acc>
  static __device__ __forceinline__ void run(Acc& acc, unsigned weight_rows, unsigned tokens,
                                             int warp_k) {
    static_assert(sizeof(Acc) == Cfg::WM / 2 * sizeof(float), "one m64nWM accumulator");
    float(&d)[Cfg::WM / 2] = *reinterpret_cast<float(*)[Cfg::WM / 2]>(&acc);
    kt_hopper::wgmma_fence();
#pragma unroll
    for (int s = 0; s < Cfg::STEPS_PER_WARP; ++s) {
      const unsigned step = static_cast<unsigned>((warp_k + s * Cfg::WARPS_K) * 32);
      kt_hopper::wgmma_m64k16_ss(d, kt_hopper::wgmma_descriptor_sw128(weight_rows + step),
                                 kt_hopper::wgmma_descriptor_sw128(tokens + step), 1);
    }
    kt_hopper::wgmma_commit();
    kt_hopper::wgmma_wait<0>();
  }
};

#endif

}  // namespace kt_skinny
