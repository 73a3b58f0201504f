// Split-K reduction of the wgmma dual GEMM, per consumer warpgroup: every slice of a tile writes
// its fp32 accumulators (both GEMMs) to the workspace and counts itself on the tile's semaphore;
// the slice that arrives last adds all partials in slice order (deterministic rounding whichever
// slice is last), resets the semaphore to zero for the next launch, and runs the epilogue. No
// slice ever waits for another, so a persistent grid cannot deadlock on an unscheduled CTA.
//
// Workspace: [tile][slice][consumer][ACC_PER_THREAD][128 threads] floats, so the 128 threads of a
// warpgroup touch 512 consecutive bytes per element. Semaphores: [tile][2], one per consumer.
#pragma once

#include "hopper_primitives.cuh"

namespace kt_dual {

__device__ __forceinline__ float load_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}

template <class Cfg>
struct SplitKReduction {
  static constexpr int ELEMENTS = Cfg::ACC_PER_THREAD;
  static constexpr int PER_GEMM = Cfg::M_BLOCKS * Cfg::ACC_PER_BLOCK;
  static_assert(Cfg::CONSUMERS <= 2, "two semaphores per tile");

  float* workspace;
  unsigned* semaphores;
  unsigned flag;  // shared address of this consumer's "last slice" word

  __device__ __forceinline__ float* partial(int tile, int slice, int consumer) const {
    const long long index =
        (static_cast<long long>(tile) * Cfg::SPLIT_K + slice) * Cfg::CONSUMERS + consumer;
    return workspace + index * ELEMENTS * 128;
  }

  // Stores this slice's accumulators, counts it, and returns whether it was the tile's last
  // slice; then acc1/acc2 hold the sum over all slices. Called by all 128 threads of a consumer.
  __device__ __forceinline__ bool reduce(float (&acc1)[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK],
                                         float (&acc2)[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK], int tile,
                                         int slice, int consumer) const {
    const int t = static_cast<int>(threadIdx.x) % 128;
    float* mine = partial(tile, slice, consumer) + t;
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
#pragma unroll
      for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j) {
        mine[(mb * Cfg::ACC_PER_BLOCK + j) * 128] = acc1[mb][j];
        mine[(PER_GEMM + mb * Cfg::ACC_PER_BLOCK + j) * 128] = acc2[mb][j];
      }
    }
    __threadfence();  // our partial is visible GPU-wide before the semaphore counts it
    const unsigned barrier_id = 1 + consumer;
    kt_hopper::named_barrier_sync(barrier_id, 128);
    if (t == 0) {
      unsigned* semaphore = semaphores + tile * 2 + consumer;
      const unsigned arrived = atomicAdd(semaphore, 1u);
      const unsigned last = arrived == static_cast<unsigned>(Cfg::SPLIT_K - 1) ? 1u : 0u;
      if (last) atomicExch(semaphore, 0u);  // every slice has counted: leave it zeroed
      asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(flag), "r"(last) : "memory");
    }
    kt_hopper::named_barrier_sync(barrier_id, 128);
    unsigned last;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(last) : "r"(flag) : "memory");
    if (!last) return false;
    __threadfence();  // acquire: the other slices' partials, counted before our atomic
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
#pragma unroll
      for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j) {
        const int e1 = (mb * Cfg::ACC_PER_BLOCK + j) * 128;
        const int e2 = (PER_GEMM + mb * Cfg::ACC_PER_BLOCK + j) * 128;
        float sum1 = 0.0f, sum2 = 0.0f;
#pragma unroll
        for (int s = 0; s < Cfg::SPLIT_K; ++s) {
          const float* p = partial(tile, s, consumer) + t;
          sum1 += load_cg(p + e1);  // our own slice too: the same bits we stored
          sum2 += load_cg(p + e2);
        }
        acc1[mb][j] = sum1;
        acc2[mb][j] = sum2;
      }
    }
    return true;
  }
};

}  // namespace kt_dual
