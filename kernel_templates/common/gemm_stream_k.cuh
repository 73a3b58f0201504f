// Stream-K fix-up of the persistent wgmma GEMMs (see gemm_work_list.cuh): a CTA that computed a
// later part of a tile stores its fp32 accumulators in its workspace slot and counts them on the
// tile's counter; the CTA that computed the tile's first k-tiles waits for every part and adds
// them in k order (deterministic), then writes C as usual.
//
// Partials are stored in fragment order (thread-major, 16-byte vectors): the finalising
// warpgroup reads them back with the same per-thread layout, independent of M and N, coalesced.
// A CTA has one slot of kSlotFloats; a warpgroup owning part of the tile's rows (cooperative
// GEMM) uses its own range of the slot, and every such warpgroup counts one arrival, so a part
// is complete after kArrivals arrivals. When several warpgroups finalise a tile, each counts one
// more arrival after reading, and the last one re-zeroes the counter for the next launch.
#pragma once

#include "gemm_work_list.cuh"
#include "hopper_primitives.cuh"

namespace kt_wgmma {

__device__ __forceinline__ void store_global_f32x4(float* dst, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}

__device__ __forceinline__ void load_global_f32x4(const float* src, float& a, float& b, float& c,
                                                  float& d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(src)
               : "memory");
}

// Partial tile of kAcc fp32 values per thread of a warpgroup: vector v of thread t at
// slot[(v * 128 + t) * 4].
template <int kAcc>
__device__ __forceinline__ void store_partial(const float* acc, float* __restrict__ slot) {
  static_assert(kAcc % 4 == 0, "accumulators move as 16-byte vectors");
  const int t = static_cast<int>(threadIdx.x) % 128;
#pragma unroll
  for (int v = 0; v < kAcc / 4; ++v)
    store_global_f32x4(slot + (v * 128 + t) * 4, acc[4 * v], acc[4 * v + 1], acc[4 * v + 2],
                       acc[4 * v + 3]);
}

template <int kAcc>
__device__ __forceinline__ void add_partial(float* acc, const float* __restrict__ slot) {
  const int t = static_cast<int>(threadIdx.x) % 128;
#pragma unroll
  for (int v = 0; v < kAcc / 4; ++v) {
    float a, b, c, d;
    load_global_f32x4(slot + (v * 128 + t) * 4, a, b, c, d);
    acc[4 * v] += a;
    acc[4 * v + 1] += b;
    acc[4 * v + 2] += c;
    acc[4 * v + 3] += d;
  }
}

// Stores a warpgroup's kAcc accumulators per thread into `part` (this CTA's slot, plus the
// warpgroup's offset) and counts the arrival on the tile's counter. `barrier` names a barrier of
// the warpgroup's 128 threads.
template <int kAcc>
__device__ __forceinline__ void contribute_partial(const float* acc, float* __restrict__ part,
                                                   unsigned* counter, unsigned barrier) {
  store_partial<kAcc>(acc, part);
  __threadfence();
  kt_hopper::named_barrier_sync(barrier, 128);
  if (threadIdx.x % 128 == 0) kt_hopper::red_release_gpu_add(counter, 1u);
}

// Waits until the CTAs holding the rest of the tile of finalising item `w` have stored their
// parts (kArrivals arrivals each), then adds them (slot h at workspace + h * kSlotFloats +
// offset) in k order. kReaders warpgroups of this CTA finalise the same tile.
template <int kAcc, int kArrivals, int kReaders, int kSlotFloats, class Work>
__device__ __forceinline__ void gather_partials(float* acc, const Work& work, const WorkItem& w,
                                                const float* __restrict__ workspace, int offset,
                                                unsigned* counter, unsigned barrier) {
  const unsigned expected = static_cast<unsigned>(work.for_each_partial(w, [](int) {}) * kArrivals);
  if (threadIdx.x % 128 == 0)
    while (kt_hopper::load_acquire_gpu(counter) < expected) {
    }
  kt_hopper::named_barrier_sync(barrier, 128);
  __threadfence();
  work.for_each_partial(w, [&](int h) {
    add_partial<kAcc>(acc, workspace + static_cast<long long>(h) * kSlotFloats + offset);
  });
  if (threadIdx.x % 128 != 0) return;
  if constexpr (kReaders == 1) {
    *counter = 0u;  // every part has arrived and been read
  } else if (atomicAdd(counter, 1u) == expected + kReaders - 1) {
    *counter = 0u;  // the last reader: every reader is past its wait
  }
}

// Stream-K for a consumer warpgroup of a cooperative GEMM (its CONSUMER_ROWS rows of the tile;
// every consumer counts an arrival per part and every one finalises the tile): a later part of the
// tile is stored in this CTA's BM x BN slot (false: the caller writes nothing); a finalising part
// adds the later ones into acc (true: the caller writes C). Items over the whole K return true.
template <class Cfg, class Work>
__device__ __forceinline__ bool settle_cooperative_part(float* acc, const Work& work,
                                                        const WorkItem& w, float* workspace,
                                                        unsigned* semaphores, int N, int consumer,
                                                        unsigned barrier) {
  constexpr int kSlot = Cfg::BM * Cfg::BN;
  const int offset = consumer * Cfg::CONSUMER_ROWS * Cfg::BN;
  unsigned* counter = semaphores + w.tile.m * cdiv_int(N, Cfg::BN) + w.tile.n;
  if (w.k_begin > 0) {  // a later part of a tile another CTA finalises
    contribute_partial<Cfg::ACC>(
        acc, workspace + static_cast<long long>(blockIdx.x) * kSlot + offset, counter, barrier);
    return false;
  }
  if (w.k_end < work.k_tiles)
    gather_partials<Cfg::ACC, Cfg::CONSUMERS, Cfg::CONSUMERS, kSlot>(acc, work, w, workspace,
                                                                     offset, counter, barrier);
  return true;
}

}  // namespace kt_wgmma
