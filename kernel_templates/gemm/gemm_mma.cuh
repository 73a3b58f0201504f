// C[M,N] = A[M,K] * B[N,K]^T with A, B, C row-major (A and B K-contiguous, like a Linear layer),
// bf16 or fp16 in and out, fp32 accumulation. Tensor cores through mma.sync m16n8k16, operand
// fragments through ldmatrix from XOR-swizzled shared tiles, global -> shared through cp.async
// in a STAGES-deep ring. Optional split-K over grid.z with a last-block fixup.
//
// Tunables arrive as -DKT_<AXIS>=<value> (see manifest.json) and become the template arguments
// of GemmConfig, whose static_asserts state every shape assumption. Launch: grid (>= cdiv(N,BN),
// >= cdiv(M,BM), SPLIT_K), WARPS_M*WARPS_N*32 threads, STAGES*(BM+BN)*BK*2 bytes of dynamic
// shared memory. Blocks past the matrix return at once (the grid may be rounded up to whole
// clusters); the kernel has no cluster barrier, so that early exit is safe.

#include "gemm_config.cuh"
#include "gemm_tile_io.cuh"
#include "mma_primitives.cuh"

#ifndef KT_CLUSTER_M
#define KT_CLUSTER_M 1  // cluster dims only shape the launch; the kernel does not read them
#endif
#ifndef KT_CLUSTER_N
#define KT_CLUSTER_N 1
#endif

namespace kt_gemm {

template <class Cfg>
struct GemmKernel {
  using AccTile = float[Cfg::MMA_M][Cfg::MMA_N][4];

  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const elem_t* __restrict__ A,
                                             const elem_t* __restrict__ B, int M, int N, int K,
                                             float* __restrict__ workspace,
                                             unsigned* __restrict__ semaphores) {
    const int tile_n = static_cast<int>(blockIdx.x);
    const int tile_m = static_cast<int>(blockIdx.y);
    const int slice = static_cast<int>(blockIdx.z);
    const int block_m = tile_m * Cfg::BM;
    const int block_n = tile_n * Cfg::BN;
    if (block_m >= M || block_n >= N) return;  // padding block of a rounded-up cluster grid

    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned smem_base = kt_mma::smem_address(smem);

    // This slice's k-tiles: [k_begin, k_begin + k_count), possibly empty for tiny K.
    const int k_tiles = (K + Cfg::BK - 1) / Cfg::BK;
    const int per_slice = (k_tiles + Cfg::SPLIT_K - 1) / Cfg::SPLIT_K;
    const int k_begin = min_int(slice * per_slice, k_tiles);
    const int k_count = min_int(per_slice, k_tiles - k_begin);

    const bool aligned =
        (K % 8) == 0 &&
        ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B)) %
         16) == 0;
    auto stage_address = [&](int i) { return smem_base + (i % Cfg::STAGES) * Cfg::STAGE_BYTES; };
    // Issues the copies of the i-th visited k-tile into its ring slot and commits them as one
    // group; past the end it commits an empty group so that group i is always tile i.
    auto load_k_tile = [&](int i) {
      if (i < k_count) {
        const unsigned base = stage_address(i);
        const int k0 = k_tile_at<Cfg::K_ORDER>(i, k_begin, k_count) * Cfg::BK;
        load_tile<Cfg, Cfg::BM>(base, A, M, K, block_m, k0, aligned);
        load_tile<Cfg, Cfg::BN>(base + Cfg::A_TILE_BYTES, B, N, K, block_n, k0, aligned);
      }
      kt_mma::cp_async_commit();
    };

    AccTile acc;
#pragma unroll
    for (int i = 0; i < Cfg::MMA_M; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_N; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) load_k_tile(s);

    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    // Fragments are double-buffered: step ks+1 (or step 0 of the next tile) is read from shared
    // memory while the MMAs of step ks run. Group accounting: before the wait of tile i+1,
    // STAGES-1 + i+1 groups were committed, so wait_group<STAGES-2> leaves tile i+1 complete.
    const FragmentOffsets offsets = fragment_offsets<Cfg>(lane, warp_row, warp_col);
    Fragments<Cfg> frag[2];
    kt_mma::cp_async_wait<Cfg::STAGES - 2>();
    __syncthreads();
    if (k_count > 0) {
      load_fragments(frag[0], stage_address(0), stage_address(0) + Cfg::A_TILE_BYTES, 0, offsets);
    }
    for (int i = 0; i < k_count; ++i) {
      const unsigned a_tile = stage_address(i);
#pragma unroll
      for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
        if (ks == Cfg::K_STEPS - 1) {
          // Tile i+1 has landed, and every warp has read its last fragments of tile i-1, whose
          // slot the copies issued at step 0 of this tile are refilling.
          kt_mma::cp_async_wait<Cfg::STAGES - 2>();
          __syncthreads();
          if (i + 1 < k_count) {
            const unsigned next_tile = stage_address(i + 1);
            load_fragments(frag[(ks + 1) % 2], next_tile, next_tile + Cfg::A_TILE_BYTES, 0,
                           offsets);
          }
        } else {
          load_fragments(frag[(ks + 1) % 2], a_tile, a_tile + Cfg::A_TILE_BYTES, ks + 1, offsets);
        }
        // Tile i+STAGES-1 goes to the slot of tile i-1, free since the barrier of step
        // K_STEPS-1 of tile i-1.
        if (ks == 0) load_k_tile(i + Cfg::STAGES - 1);
        mma_step(acc, frag[ks % 2]);
      }
    }
    kt_mma::cp_async_wait<0>();

    const int row0 = block_m + warp_row + lane / 4;  // accumulator layout of m16n8: rows g, g+8
    const int col0 = block_n + warp_col + (lane % 4) * 2;  // and columns 2*(lane%4), +1
    if constexpr (Cfg::SPLIT_K == 1) {
#pragma unroll
      for (int i = 0; i < Cfg::MMA_M; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::MMA_N; ++j) {
          const int row = row0 + i * 16;
          const int col = col0 + j * 8;
          store_pair(C, M, N, row, col, acc[i][j][0], acc[i][j][1]);
          store_pair(C, M, N, row + 8, col, acc[i][j][2], acc[i][j][3]);
        }
    } else {
      split_k_fixup(acc, C, M, N, workspace, semaphores, slice, row0, col0,
                    tile_m * ((N + Cfg::BN - 1) / Cfg::BN) + tile_n);
    }
  }

  static __device__ __forceinline__ void mma_step(AccTile& acc, const Fragments<Cfg>& f) {
#pragma unroll
    for (int i = 0; i < Cfg::MMA_M; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_N; ++j) kt_mma::mma_16816(acc[i][j], f.a[i], f.b[j]);
  }

  // Every slice stores its fp32 tile in workspace[slice][M][N]; the last block of the tile to
  // arrive adds the slices in slice order (so the result does not depend on arrival order),
  // writes C and re-zeroes the tile's counter for the next launch.
  static __device__ __forceinline__ void split_k_fixup(AccTile& acc, elem_t* __restrict__ C, int M,
                                                       int N, float* __restrict__ workspace,
                                                       unsigned* __restrict__ semaphores, int slice,
                                                       int row0, int col0, int tile_id) {
    const long long slice_elems = static_cast<long long>(M) * N;
    float* mine = workspace + slice * slice_elems;
#pragma unroll
    for (int i = 0; i < Cfg::MMA_M; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_N; ++j) {
        const int row = row0 + i * 16;
        const int col = col0 + j * 8;
        store_partial_pair(mine, M, N, row, col, acc[i][j][0], acc[i][j][1]);
        store_partial_pair(mine, M, N, row + 8, col, acc[i][j][2], acc[i][j][3]);
      }
    __threadfence();  // partials visible device-wide before the arrival is counted
    __syncthreads();  // also: every thread is past its last shared-memory read

    extern __shared__ __align__(128) unsigned char smem[];
    volatile unsigned* last_flag = reinterpret_cast<unsigned*>(smem);  // the ring is free now
    if (threadIdx.x == 0) {
      const unsigned arrived = atomicAdd(semaphores + tile_id, 1u);
      *last_flag = arrived == Cfg::SPLIT_K - 1 ? 1u : 0u;
    }
    __syncthreads();
    if (*last_flag == 0u) return;
    __threadfence();  // order the reads of other slices after observing their arrival

#pragma unroll
    for (int i = 0; i < Cfg::MMA_M; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::MMA_N; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = row0 + i * 16 + half * 8;
          const int col = col0 + j * 8;
          if (row >= M || col >= N) continue;
          const long long at = static_cast<long long>(row) * N + col;
          float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
          for (int s = 0; s < Cfg::SPLIT_K; ++s) {
            if (s == slice) {
              sum0 += acc[i][j][2 * half];
              sum1 += acc[i][j][2 * half + 1];
            } else {
              const float* part = workspace + s * slice_elems + at;
              sum0 += kt_mma::load_global_cg(part);
              if (col + 1 < N) sum1 += kt_mma::load_global_cg(part + 1);
            }
          }
          store_pair(C, M, N, row, col, sum0, sum1);
        }
    if (threadIdx.x == 0) semaphores[tile_id] = 0u;  // every slice has arrived: safe to reset
  }
};

}  // namespace kt_gemm

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_WARPS_M) && \
    defined(KT_WARPS_N) && defined(KT_STAGES) && defined(KT_K_ORDER) && defined(KT_SPLIT_K)
using KtGemmChosen = kt_gemm::GemmConfig<KT_BM, KT_BN, KT_BK, KT_WARPS_M, KT_WARPS_N, KT_STAGES,
                                         KT_K_ORDER, KT_SPLIT_K>;
static_assert(KT_CLUSTER_M >= 1 && KT_CLUSTER_N >= 1, "cluster dims are >= 1");

// Entry point; parameters in the order of manifest.json "args".
extern "C" __global__ void __launch_bounds__(KtGemmChosen::THREADS, 1)
    kt_gemm_mma(unsigned short* __restrict__ C, const unsigned short* __restrict__ A,
                const unsigned short* __restrict__ B, int M, int N, int K,
                float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  kt_gemm::GemmKernel<KtGemmChosen>::run(C, A, B, M, N, K, workspace, semaphores);
}
#endif
