// C[M,N] = A[M,K] * B[N,K]^T on Hopper (sm_90a) with wgmma fed without TMA, for the shapes TMA
// cannot or should not take: K whose rows are not 16-byte aligned (any K works, see
// gemm_cp_async_io.cuh), a small N or a small M (narrow wgmma n of 16..96; SWAP puts B's rows on
// the m side and computes C^T), and grids too small for the GPU (K split over the CTAs of a
// thread-block cluster, summed in slice order through distributed shared memory: no workspace,
// deterministic).
//
// Every warpgroup both loads (all threads copy each stage) and computes (its share of the m-side
// rows, wgmma m64nN_SIDEk16 straight from the ring). Main loop, iteration i (ring of STAGES):
//   [VEC 2: store the registers fetched last iteration = k-tile i+STAGES-3]
//   [cp.async: wait until k-tile i landed]  fence.proxy.async  __syncthreads
//   fetch k-tile i+STAGES-2 (cp.async, or loads into registers)
//   wgmma on k-tile i, keep it running, wait for i-1
// so a refilled slot was last read by wgmma i-2 (or i-3), finished before the barrier.
// Epilogue: the fp32 tile parks in the ring as [BM][PARTIAL_LD] (C's layout), the cluster's
// slices are summed in rank order and C is written 4 columns at a time, bounds-checked.
//
// Launch: grid (cdiv(m-side rows, M_SIDE), cdiv(n-side rows, N_SIDE), SPLIT_K), cluster
// (1, 1, SPLIT_K), WARPGROUPS*128 threads, CpAsyncConfig::SMEM_BYTES + 1024 bytes of dynamic
// shared memory. Every CTA takes part in the cluster barriers, so none returns early.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_cp_async.cuh needs sm_90a: wgmma exists on no other target"
#endif

#include "gemm_cp_async_config.cuh"
#include "gemm_cp_async_io.cuh"
#include "gemm_skinny_io.cuh"
#include "hopper_primitives.cuh"
#include "hopper_wgmma_ops.cuh"
#include "mma_primitives.cuh"

namespace kt_cp_async {

template <class Cfg>
struct CpAsyncKernel {
  using Acc = float[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];
  using Loader = StageLoader<Cfg>;

  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const elem_t* __restrict__ A,
                                             const elem_t* __restrict__ B, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const int tile_m_side = static_cast<int>(blockIdx.x);
    const int tile_n_side = static_cast<int>(blockIdx.y);
    const int slice = static_cast<int>(blockIdx.z);
    const Operands op{Cfg::SWAP ? B : A,
                      Cfg::SWAP ? A : B,
                      Cfg::SWAP ? N : M,
                      Cfg::SWAP ? M : N,
                      tile_m_side * Cfg::M_SIDE,
                      tile_n_side * Cfg::N_SIDE,
                      K};

    // This slice's k-tiles: [k_begin, k_begin + k_count), empty when K is short.
    const int k_tiles = (K + Cfg::BK - 1) / Cfg::BK;
    const int per_slice = (k_tiles + Cfg::SPLIT_K - 1) / Cfg::SPLIT_K;
    const int k_begin = slice * per_slice < k_tiles ? slice * per_slice : k_tiles;
    const int k_count = per_slice < k_tiles - k_begin ? per_slice : k_tiles - k_begin;
    auto stage = [&](int i) { return base + (i % Cfg::STAGES) * Cfg::STAGE_BYTES; };
    auto k0 = [&](int i) { return (k_begin + i) * Cfg::BK; };

    const Loader loader;
    const int warpgroup = static_cast<int>(threadIdx.x) / 128;
    Acc acc;
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
      for (int r = 0; r < Cfg::ACC_PER_BLOCK; ++r) acc[mb][r] = 0.f;

    // Shared addresses of this warpgroup's m-side rows and of the n-side tile in stage 0.
    const unsigned m_rows = base + warpgroup * Cfg::WG_ROWS * 128;
    const unsigned n_rows = base + Cfg::N_SIDE_OFFSET;

    if constexpr (Cfg::VEC == 2) {
      typename Loader::Staged staged;
#pragma unroll 1
      for (int i = 0; i < Cfg::STAGES - 3 && i < k_count; ++i) {
        loader.fetch(op, k0(i), staged);
        loader.deposit(op, stage(i), k0(i), staged);
      }
      if (Cfg::STAGES - 3 < k_count) loader.fetch(op, k0(Cfg::STAGES - 3), staged);
#pragma unroll 1
      for (int i = 0; i < k_count; ++i) {
        const int ahead = i + Cfg::STAGES - 3;
        if (ahead < k_count) loader.deposit(op, stage(ahead), k0(ahead), staged);
        kt_hopper::fence_proxy_async_shared();
        __syncthreads();
        if (ahead + 1 < k_count) loader.fetch(op, k0(ahead + 1), staged);
        mma_k_tile(acc, m_rows + (i % Cfg::STAGES) * Cfg::STAGE_BYTES,
                   n_rows + (i % Cfg::STAGES) * Cfg::STAGE_BYTES);
      }
    } else {
#pragma unroll
      for (int s = 0; s < Cfg::STAGES - 2; ++s) {
        if (s < k_count) loader.copy_async(op, stage(s), k0(s));
        kt_mma::cp_async_commit();
      }
#pragma unroll 1
      for (int i = 0; i < k_count; ++i) {
        // Group g holds k-tile g: with i + STAGES-2 committed, k-tile i has landed.
        kt_mma::cp_async_wait<Cfg::STAGES - 3>();
        kt_hopper::fence_proxy_async_shared();
        __syncthreads();
        const int ahead = i + Cfg::STAGES - 2;
        if (ahead < k_count) loader.copy_async(op, stage(ahead), k0(ahead));
        kt_mma::cp_async_commit();
        mma_k_tile(acc, m_rows + (i % Cfg::STAGES) * Cfg::STAGE_BYTES,
                   n_rows + (i % Cfg::STAGES) * Cfg::STAGE_BYTES);
      }
      kt_mma::cp_async_wait<0>();
    }
    kt_hopper::wgmma_wait<0>();
    __syncthreads();  // the ring is free: it becomes the fp32 C tile

    park(acc, base, warpgroup);
    if constexpr (Cfg::SPLIT_K > 1) {
      kt_hopper::cluster_sync();
    } else {
      __syncthreads();
    }
    const int block_row = (Cfg::SWAP ? tile_n_side : tile_m_side) * Cfg::BM;
    const int block_col = (Cfg::SWAP ? tile_m_side : tile_n_side) * Cfg::BN;
    reduce_and_store(C, M, N, block_row, block_col, base);
    if constexpr (Cfg::SPLIT_K > 1) kt_hopper::cluster_sync();  // peers may still read ours
  }

  // One k-tile (4 k16 steps) of this warpgroup's m64 blocks; leaves it running and waits for the
  // previous k-tile's wgmmas.
  static __device__ __forceinline__ void mma_k_tile(Acc& acc, unsigned m_rows, unsigned n_rows) {
    kt_hopper::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < Cfg::BK / 16; ++ks) {
      const unsigned long long b = kt_hopper::wgmma_descriptor_sw128(n_rows + ks * 32);
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
        kt_hopper::wgmma_m64k16_ss(
            acc[mb], kt_hopper::wgmma_descriptor_sw128(m_rows + mb * 64 * 128 + ks * 32), b, 1);
    }
    kt_hopper::wgmma_commit();
    kt_hopper::wgmma_wait<1>();
  }

  // The warpgroup's accumulators into the fp32 C tile [BM][PARTIAL_LD] at `tile`. wgmma layout:
  // element 4j+2h+e of m64 block mb is m-side row 16w + lane/4 + 8h, n-side column 8j +
  // 2*(lane%4) + e.
  static __device__ __forceinline__ void park(const Acc& acc, unsigned tile, int warpgroup) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const int lane = t % 32;
    const int m0 = warpgroup * Cfg::WG_ROWS + (t / 32) * 16 + lane / 4;
    const int n0 = 2 * (lane % 4);
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
      for (int j = 0; j < Cfg::N_SIDE / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = m0 + mb * 64 + 8 * h;
          const int n = n0 + 8 * j;
          const float v0 = acc[mb][4 * j + 2 * h], v1 = acc[mb][4 * j + 2 * h + 1];
          if constexpr (Cfg::SWAP) {  // C row n, column m
            kt_skinny::store_shared_f32(tile + (n * Cfg::PARTIAL_LD + m) * 4, v0);
            kt_skinny::store_shared_f32(tile + ((n + 1) * Cfg::PARTIAL_LD + m) * 4, v1);
          } else {
            asm volatile(
                "st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(tile + (m * Cfg::PARTIAL_LD + n) * 4),
                "f"(v0), "f"(v1)
                : "memory");
          }
        }
  }

  // CTA `rank` of the cluster sums quads (4 consecutive columns of a row) rank, rank + SPLIT_K,
  // ... (in units of THREADS quads) over every slice's tile, in slice order, and writes them.
  static __device__ __forceinline__ void reduce_and_store(elem_t* __restrict__ C, int M, int N,
                                                          int block_row, int block_col,
                                                          unsigned tile) {
    constexpr int kQuadsPerRow = Cfg::BN / 4;
    constexpr int kQuads = Cfg::BM * kQuadsPerRow;
    constexpr int kStride = Cfg::SPLIT_K * Cfg::THREADS;
    const unsigned rank = Cfg::SPLIT_K > 1 ? kt_hopper::cluster_ctarank() : 0u;
#pragma unroll 1
    for (int quad = static_cast<int>(rank) * Cfg::THREADS + static_cast<int>(threadIdx.x);
         quad < kQuads; quad += kStride) {
      const int row = quad / kQuadsPerRow;
      const int col = (quad % kQuadsPerRow) * 4;
      if (block_row + row >= M || block_col + col >= N) continue;
      const unsigned local = tile + (row * Cfg::PARTIAL_LD + col) * 4;
      kt_skinny::Quad parts[Cfg::SPLIT_K];  // all loads first: their latencies overlap
#pragma unroll
      for (int s = 0; s < Cfg::SPLIT_K; ++s) {
        if constexpr (Cfg::SPLIT_K > 1) {
          parts[s] = kt_skinny::load_cluster_quad(kt_hopper::map_shared_rank(local, s));
        } else {
          parts[s] = kt_skinny::load_shared_quad(local);
        }
      }
      kt_skinny::Quad sum = parts[0];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT_K; ++s) {
        sum.x += parts[s].x;
        sum.y += parts[s].y;
        sum.z += parts[s].z;
        sum.w += parts[s].w;
      }
      kt_skinny::store_quad(C, N, block_row + row, block_col + col, sum);
    }
  }
};

}  // namespace kt_cp_async

#if defined(KT_BM) && defined(KT_BN) && defined(KT_STAGES) && defined(KT_WARPGROUPS) && \
    defined(KT_SPLIT_K) && defined(KT_SWAP) && defined(KT_VEC)
using KtCpAsyncChosen =
    kt_cp_async::CpAsyncConfig<KT_BM, KT_BN, KT_STAGES, KT_WARPGROUPS, KT_SPLIT_K, KT_SWAP, KT_VEC>;

// Entry point; parameters in the order of the gemm family's "args" (workspace and semaphores are
// not needed: the K slices are summed inside the cluster).
extern "C" __global__ void __launch_bounds__(KtCpAsyncChosen::THREADS, KtCpAsyncChosen::MIN_BLOCKS)
    kt_gemm_cp_async(unsigned short* __restrict__ C, const unsigned short* __restrict__ A,
                     const unsigned short* __restrict__ B, int M, int N, int K,
                     float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  (void)workspace;
  (void)semaphores;
  kt_cp_async::CpAsyncKernel<KtCpAsyncChosen>::run(C, A, B, M, N, K);
}
#endif
