// Skinny / decode-shape GEMM: C[M,N] = A[M,K] * B[N,K]^T for few tokens (M up to a few hundred)
// and large N, K, where streaming the weights B is the whole cost. Computed as C^T = B * A^T:
// weight rows are the m side of the MMA and tokens its n side (MMA=0: mma.sync m16n8k16 per
// warp from ldmatrix fragments; MMA=1, sm_90a: wgmma m64nWMk16 per warpgroup straight from the
// ring, see gemm_skinny_wgmma.cuh). Each block streams a BN x (K / SPLIT_K) slab of B and the
// matching BM tokens through a STAGES-deep cp.async ring; its warps split weight rows (WARPS_N),
// tokens (WARPS_M) and the k16 steps of a stage (WARPS_K). The SPLIT_K blocks of one output tile
// form one thread-block cluster along z: each parks its fp32 partials in its own shared memory
// and, after a cluster barrier, sums a share of the tile over all blocks in slice order through
// distributed shared memory. No global workspace, no semaphores, deterministic.
//
// Launch: grid (cdiv(N,BN), cdiv(M,BM), SPLIT_K), cluster (1, 1, SPLIT_K),
// WARPS_N*WARPS_M*WARPS_K*32 threads, SkinnyConfig::SMEM_BYTES of dynamic shared memory (and no
// static shared memory, so the ring starts 1024-byte aligned as wgmma's 128B swizzle needs).
// Every block takes part in the cluster barriers, so none may return early.

#include "gemm_skinny_config.cuh"
#include "gemm_skinny_io.cuh"
#include "gemm_skinny_wgmma.cuh"
#include "gemm_tile_io.cuh"
#include "hopper_primitives.cuh"
#include "mma_primitives.cuh"

#ifndef KT_MMA
#define KT_MMA 0  // the axis exists on every arch; wgmma variants are pruned off sm_90a
#endif

namespace kt_skinny {

template <class Cfg>
struct SkinnyKernel {
  using Acc = float[Cfg::MMA_W][Cfg::MMA_T][4];

  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const elem_t* __restrict__ A,
                                             const elem_t* __restrict__ B, int M, int N, int K) {
    const int block_n = static_cast<int>(blockIdx.x) * Cfg::BN;  // first weight row
    const int block_m = static_cast<int>(blockIdx.y) * Cfg::BM;  // first token
    const int slice = static_cast<int>(blockIdx.z);

    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned smem_base = kt_mma::smem_address(smem);

    // This slice's k-tiles: [k_begin, k_begin + k_count), empty when K is short.
    const int k_tiles = (K + Cfg::BK - 1) / Cfg::BK;
    const int per_slice = (k_tiles + Cfg::SPLIT_K - 1) / Cfg::SPLIT_K;
    const int k_begin = kt_gemm::min_int(slice * per_slice, k_tiles);
    const int k_count = kt_gemm::min_int(per_slice, k_tiles - k_begin);

    const bool aligned =
        (K % 8) == 0 &&
        ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B)) %
         16) == 0;
    auto stage_address = [&](int i) { return smem_base + (i % Cfg::STAGES) * Cfg::STAGE_BYTES; };
    // Group i always holds k-tile i (empty past the end), so wait_group counts stay exact.
    auto load_k_tile = [&](int i) {
      if (i < k_count) {
        const unsigned base = stage_address(i);
        const int k0 = (k_begin + i) * Cfg::BK;
        load_tile<Cfg, Cfg::BN>(base + Cfg::TOKEN_TILE_BYTES, B, N, K, block_n, k0, aligned);
        load_tile<Cfg, Cfg::BM>(base, A, M, K, block_m, k0, aligned);
      }
      kt_mma::cp_async_commit();
    };

#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) load_k_tile(s);

    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    // Weight-row warps vary fastest, so 4 consecutive warps (a warpgroup) share tokens and k steps.
    const int warp_row = (warp % Cfg::WARPS_N) * Cfg::WN;
    const int warp_token = ((warp / Cfg::WARPS_N) % Cfg::WARPS_M) * Cfg::WM;
    const int warp_k = warp / (Cfg::WARPS_N * Cfg::WARPS_M);
    // ldmatrix row addresses at k step 0 (see kt_gemm::fragment_offsets): weights as the m16 x k16
    // operand, tokens as the k16 x n8 one; a step's chunks are reached by XOR with ks*32.
    const unsigned weight_offset =
        kt_gemm::tile_offset<Cfg::BK>(warp_row + lane % 16, (lane / 16) * 8);
    const unsigned token_offset = kt_gemm::tile_offset<Cfg::BK>(
        warp_token + lane % 8 + (lane / 16) * 8, ((lane / 8) % 2) * 8);

    Acc acc;
#pragma unroll
    for (int i = 0; i < Cfg::MMA_W; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_T; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    for (int i = 0; i < k_count; ++i) {
      // Tile i has landed, and every warp is done with tile i-1, whose slot is refilled next.
      kt_mma::cp_async_wait<Cfg::STAGES - 2>();
      if constexpr (Cfg::MMA == kWgmma) kt_hopper::fence_proxy_async_shared();  // for wgmma reads
      __syncthreads();
      load_k_tile(i + Cfg::STAGES - 1);
      const unsigned token_tile = stage_address(i);
      const unsigned weight_tile = token_tile + Cfg::TOKEN_TILE_BYTES;
      if constexpr (Cfg::MMA == kWgmma) {
        // Done before the next barrier: the slot of tile i is refilled right after it.
        WgmmaTile<Cfg>::run(acc, weight_tile + (warp_row / 64) * 64 * 128,
                            token_tile + warp_token * 128, warp_k);
      } else {
#pragma unroll
        for (int s = 0; s < Cfg::STEPS_PER_WARP; ++s) {
          const unsigned step = static_cast<unsigned>((warp_k + s * Cfg::WARPS_K) * 32);
          mma_step(acc, weight_tile + (weight_offset ^ step), token_tile + (token_offset ^ step));
        }
      }
    }
    kt_mma::cp_async_wait<0>();
    __syncthreads();  // the ring is free: it becomes the partial tiles

    park_partials(acc, smem_base, warp_k, warp_row, warp_token, lane);
    if constexpr (Cfg::WARPS_K > 1) {
      __syncthreads();
      fold_k_warps(smem_base);
    }
    if constexpr (Cfg::SPLIT_K > 1) {
      kt_hopper::cluster_sync();
    } else {
      __syncthreads();
    }
    reduce_and_store(C, M, N, block_m, block_n, smem_base);
    if constexpr (Cfg::SPLIT_K > 1)
      kt_hopper::cluster_sync();  // keep this block's partials alive for others
  }

  // One k16 step: the warp's MMA_W weight fragments and MMA_T token fragments, then the MMAs.
  static __device__ __forceinline__ void mma_step(Acc& acc, unsigned weight_at, unsigned token_at) {
    constexpr unsigned kRows16 = 16 * Cfg::BK * 2;  // bytes of 16 tile rows
    unsigned w[Cfg::MMA_W][4];
    unsigned t[Cfg::MMA_T][2];
#pragma unroll
    for (int i = 0; i < Cfg::MMA_W; ++i) kt_mma::ldmatrix_x4(w[i], weight_at + i * kRows16);
#pragma unroll
    for (int j = 0; j < Cfg::MMA_T; j += 2) {
      unsigned r[4];
      kt_mma::ldmatrix_x4(r, token_at + (j / 2) * kRows16);
      t[j][0] = r[0];
      t[j][1] = r[1];
      t[j + 1][0] = r[2];
      t[j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < Cfg::MMA_W; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_T; ++j) kt_mma::mma_16816(acc[i][j], w[i], t[j]);
  }

  // Stores the warp's accumulators into partial tile warp_k, laid out [token][weight row]. In the
  // m16n8 accumulator layout lane holds weight rows g, g+8 and tokens 2q, 2q+1 (g = lane/4,
  // q = lane%4).
  static __device__ __forceinline__ void park_partials(const Acc& acc, unsigned smem_base,
                                                       int warp_k, int warp_row, int warp_token,
                                                       int lane) {
    const unsigned tile = smem_base + warp_k * (Cfg::BM * Cfg::PARTIAL_LD * 4);
    const int row = warp_row + lane / 4;
    const int token = warp_token + (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < Cfg::MMA_W; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_T; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int at = (token + j * 8 + r % 2) * Cfg::PARTIAL_LD + row + i * 16 + (r / 2) * 8;
          store_shared_f32(tile + at * 4, acc[i][j][r]);
        }
  }

  // Sums the WARPS_K partial tiles into the first one, in k-warp order.
  static __device__ __forceinline__ void fold_k_warps(unsigned smem_base) {
    constexpr int kQuads = Cfg::BM * Cfg::PARTIAL_LD / 4;  // padding columns included: harmless
    constexpr unsigned kPartialBytes = Cfg::BM * Cfg::PARTIAL_LD * 4;
#pragma unroll 1
    for (int quad = static_cast<int>(threadIdx.x); quad < kQuads; quad += Cfg::THREADS) {
      const unsigned at = smem_base + quad * 16;
      Quad parts[Cfg::WARPS_K];
#pragma unroll
      for (int w = 0; w < Cfg::WARPS_K; ++w) parts[w] = load_shared_quad(at + w * kPartialBytes);
#pragma unroll
      for (int w = 1; w < Cfg::WARPS_K; ++w) {
        parts[0].x += parts[w].x;
        parts[0].y += parts[w].y;
        parts[0].z += parts[w].z;
        parts[0].w += parts[w].w;
      }
      store_shared_quad(at, parts[0]);
    }
  }

  // Block `rank` of the cluster sums quads (4 consecutive weight rows of one token) rank,
  // rank + SPLIT_K, ... (in units of THREADS quads) over the folded partial of every slice, in
  // slice order, and writes them to C.
  static __device__ __forceinline__ void reduce_and_store(elem_t* __restrict__ C, int M, int N,
                                                          int block_m, int block_n,
                                                          unsigned smem_base) {
    constexpr int kQuadsPerToken = Cfg::BN / 4;
    constexpr int kQuads = Cfg::BM * kQuadsPerToken;
    constexpr int kStride = Cfg::SPLIT_K * Cfg::THREADS;
    constexpr int kRounds = (kQuads + kStride - 1) / kStride;
    const unsigned rank = Cfg::SPLIT_K > 1 ? kt_hopper::cluster_ctarank() : 0u;
#pragma unroll 1
    for (int round = 0; round < kRounds; ++round) {
      const int quad =
          round * kStride + static_cast<int>(rank) * Cfg::THREADS + static_cast<int>(threadIdx.x);
      if (kQuads % kStride != 0 && quad >= kQuads) break;
      const int token = quad / kQuadsPerToken;
      const int row = (quad % kQuadsPerToken) * 4;
      if (block_m + token >= M || block_n + row >= N) continue;
      const unsigned local = smem_base + (token * Cfg::PARTIAL_LD + row) * 4;
      Quad parts[Cfg::SPLIT_K];  // all loads first: their latencies overlap
#pragma unroll
      for (int s = 0; s < Cfg::SPLIT_K; ++s) {
        if constexpr (Cfg::SPLIT_K > 1) {
          parts[s] = load_cluster_quad(kt_hopper::map_shared_rank(local, s));
        } else {
          parts[s] = load_shared_quad(local);
        }
      }
      Quad sum = parts[0];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT_K; ++s) {
        sum.x += parts[s].x;
        sum.y += parts[s].y;
        sum.z += parts[s].z;
        sum.w += parts[s].w;
      }
      store_quad(C, N, block_m + token, block_n + row, sum);
    }
  }
};

}  // namespace kt_skinny

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_WARPS_N) && \
    defined(KT_WARPS_M) && defined(KT_WARPS_K) && defined(KT_STAGES) && defined(KT_SPLIT_K)
using KtSkinnyChosen = kt_skinny::SkinnyConfig<KT_BM, KT_BN, KT_BK, KT_WARPS_N, KT_WARPS_M,
                                               KT_WARPS_K, KT_STAGES, KT_SPLIT_K, KT_MMA>;

// Entry point; parameters in the order of the gemm family's "args" (workspace and semaphores are
// not needed: the K slices are summed inside the cluster).
extern "C" __global__ void __launch_bounds__(KtSkinnyChosen::THREADS, KtSkinnyChosen::MIN_BLOCKS)
    kt_gemm_skinny(unsigned short* __restrict__ C, const unsigned short* __restrict__ A,
                   const unsigned short* __restrict__ B, int M, int N, int K,
                   float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  (void)workspace;
  (void)semaphores;
  kt_skinny::SkinnyKernel<KtSkinnyChosen>::run(C, A, B, M, N, K);
}
#endif
