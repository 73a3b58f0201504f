// Grouped dual GEMM with SiLU for Hopper (sm_90a): for every group g of G,
//   C_g = silu(A_g * B1_g^T) (.) (A_g * B2_g^T),   A_g [M,K], B1_g, B2_g [N,K], C_g [M,N],
// all row-major (K-contiguous operands), bf16 or fp16 in and out, fp32 accumulation, one launch
// for all groups. Nothing but C goes to global memory (split-K partials aside).
//
// Block: one producer warpgroup and CONSUMERS consumer warpgroups. One producer thread streams,
// per k-tile, the BMxBK tile of A once and the BNxBK tiles of B1 and B2 with TMA (128B swizzle,
// zero fill past M, N and K: 3-D tensor maps over [G][rows][K], so a ragged tile never reads the
// next group) into a STAGES-deep shared-memory ring of full/empty mbarriers. Consumer warpgroup c
// owns rows [c*BM/CONSUMERS, (c+1)*BM/CONSUMERS) of the tile and issues, per k16 step, wgmma
// m64nBNk16 against B1 into one accumulator and against B2 into a second, sharing the A operand;
// one stage stays in flight while it waits for the next. The epilogue computes silu(acc1)*acc2
// in registers and stores C (bounds-checked) while the producer already fills the ring with the
// next tile. setmaxnreg moves registers from the producer to the consumers.
//
// Persistent over groups, tiles and K slices (kt_sched::GroupedTileScheduler); SPLIT_K > 1 splits
// each tile's K loop into slices whose partials the last slice sums (dual_gemm_split_k.cuh), so
// small-M problems still fill every SM. Clusters of CLUSTER_M x CLUSTER_N CTAs (launched as
// (CLUSTER_SIZE,1,1)) compute neighbouring tiles of one group; CTAs of one tile row share A and
// of one tile column share B1 and B2, each loading a slice of the shared tiles once and
// multicasting it to its peers.
//
// Launch: grid (CTAs, 1, 1) with CTAs a multiple of CLUSTER_SIZE, (CONSUMERS+1)*128 threads,
// STAGES*(BM+2*BN)*BK*2 + 2048 bytes of dynamic shared memory. A, B1, B2 arrive as tensor maps
// over [G][M][K], [G][N][K], [G][N][K] with boxes {64, BM/CLUSTER_N, 1} and {64, BN/CLUSTER_M, 1},
// 128B swizzle (K % 8 == 0: the copy engine needs 16-byte row pitches).

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "dual_gemm_wgmma.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

#include "dual_gemm_split_k.cuh"
#include "dual_gemm_wgmma_config.cuh"
#include "hopper_primitives.cuh"
#include "hopper_wgmma_ops.cuh"
#include "pipeline_ring.cuh"
#include "silu.cuh"
#include "wgmma_store.cuh"

namespace kt_dual {

using kt_mma::elem_t;
using kt_pipe::RingCursor;
using kt_sched::WorkTile;

// Shared addresses of the ring: stage s of A at a + s*A_STAGE_BYTES, of B1 at b1 + s*B_STAGE_BYTES
// (B2 likewise); the full and empty barriers of stage s at full + 8s and empty + 8s.
struct Ring {
  unsigned a, b1, b2, full, empty;
};

template <class Cfg>
struct DualWgmmaKernel {
  using Scheduler = typename Cfg::Scheduler;
  using Accumulators = float[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];

  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b1, const KtTensorMap* tma_b2,
                                             int G, int M, int N, int K, float* workspace,
                                             unsigned* semaphores) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // 128B-swizzled tiles must start on 1024-byte boundaries (the descriptors' base offset is 0).
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const Ring ring{base + Cfg::A_OFFSET, base + Cfg::B1_OFFSET, base + Cfg::B2_OFFSET,
                    base + Cfg::BARRIER_OFFSET, base + Cfg::BARRIER_OFFSET + Cfg::STAGES * 8};
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;

    if (threadIdx.x == 0) {
      for (int s = 0; s < Cfg::STAGES; ++s) {
        kt_hopper::mbarrier_init(ring.full + 8 * s, 1);  // the producer's expect_tx arrival
        kt_hopper::mbarrier_init(ring.empty + 8 * s, Cfg::CONSUMERS * Cfg::CLUSTER_SIZE);
      }
      kt_hopper::fence_mbarrier_init();
    }
    // Peers multicast into our ring and arrive on our barriers: all must be initialised first.
    if constexpr (Cfg::CLUSTER_SIZE > 1) {
      kt_hopper::cluster_sync();
    } else {
      __syncthreads();
    }

    const int rank_m = static_cast<int>(cta_rank) % Cfg::CLUSTER_M;
    const int rank_n = static_cast<int>(cta_rank) / Cfg::CLUSTER_M;
    const Scheduler scheduler(G, M, N, rank_m, rank_n,
                              static_cast<int>(blockIdx.x) / Cfg::CLUSTER_SIZE,
                              static_cast<int>(gridDim.x) / Cfg::CLUSTER_SIZE);
    const int k_tiles = kt_sched::cdiv(K, Cfg::BK);
    const int warpgroup = static_cast<int>(threadIdx.x) / 128;
    if (warpgroup == 0) {
      kt_hopper::setmaxnreg_dec<Cfg::PRODUCER_REGISTERS>();
      if (threadIdx.x == 0) produce(ring, scheduler, tma_a, tma_b1, tma_b2, k_tiles);
    } else {
      kt_hopper::setmaxnreg_inc<Cfg::CONSUMER_REGISTERS>();
      const SplitKReduction<Cfg> split_k{workspace, semaphores,
                                         base + Cfg::FLAG_OFFSET + 4 * (warpgroup - 1)};
      consume(ring, scheduler, split_k, C, M, N, k_tiles, warpgroup - 1);
    }
    // No CTA may leave while a peer can still arrive on its barriers or write its ring.
    if constexpr (Cfg::CLUSTER_SIZE > 1) kt_hopper::cluster_sync();
  }

  // Multicast masks: the CTAs of this one's tile row (sharing A) and tile column (sharing B1, B2).
  static __device__ __forceinline__ unsigned short row_peers(int rank_m) {
    unsigned mask = 0;
#pragma unroll
    for (int j = 0; j < Cfg::CLUSTER_N; ++j) mask |= 1u << (rank_m + Cfg::CLUSTER_M * j);
    return static_cast<unsigned short>(mask);
  }
  static __device__ __forceinline__ unsigned short column_peers(int rank_n) {
    return static_cast<unsigned short>(((1u << Cfg::CLUSTER_M) - 1u) << (Cfg::CLUSTER_M * rank_n));
  }

  // One box of `rows` rows at (k, row) of group g, multicast to `peers` when shared.
  template <bool kShared>
  static __device__ __forceinline__ void load(unsigned dst, const KtTensorMap* map, unsigned full,
                                              int k, int row, int g, unsigned short peers) {
    if constexpr (kShared) {
      kt_hopper::tma_load_3d_multicast(dst, map, full, k, row, g, peers);
    } else {
      kt_hopper::tma_load_3d(dst, map, full, k, row, g);
    }
  }

  static __device__ __forceinline__ void produce(const Ring& ring, const Scheduler& scheduler,
                                                 const KtTensorMap* tma_a,
                                                 const KtTensorMap* tma_b1,
                                                 const KtTensorMap* tma_b2, int k_tiles) {
    kt_hopper::prefetch_tensormap(tma_a);
    kt_hopper::prefetch_tensormap(tma_b1);
    kt_hopper::prefetch_tensormap(tma_b2);
    const unsigned short a_peers = row_peers(scheduler.rank_m);
    const unsigned short b_peers = column_peers(scheduler.rank_n);
    // This CTA's slice of the shared tiles: rows and shared offset inside the stage.
    const int a_slice_row = scheduler.rank_n * Cfg::A_BOX_ROWS;
    const int b_slice_row = scheduler.rank_m * Cfg::B_BOX_ROWS;
    RingCursor<Cfg::STAGES> cursor;
    for (int u = scheduler.first; u < scheduler.total; u += scheduler.stride) {
      const WorkTile w = scheduler.work(u);
      const int k_begin = Scheduler::slice_begin(w.slice, k_tiles);
      const int k_end = Scheduler::slice_end(w.slice, k_tiles);
      const int a_row = w.m * Cfg::BM + a_slice_row;
      const int b_row = w.n * Cfg::BN + b_slice_row;
      for (int i = 0; i < k_end - k_begin; ++i) {
        const int kt = Cfg::K_ORDER == kReverse ? k_end - 1 - i : k_begin + i;
        const unsigned full = ring.full + 8 * cursor.stage;
        kt_hopper::mbarrier_wait(ring.empty + 8 * cursor.stage, cursor.phase ^ 1u);
        kt_hopper::mbarrier_arrive_expect_tx(full, Cfg::STAGE_BYTES);
        const unsigned a_dst = ring.a + cursor.stage * Cfg::A_STAGE_BYTES + a_slice_row * 128;
        const unsigned b1_dst = ring.b1 + cursor.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
        const unsigned b2_dst = ring.b2 + cursor.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
#pragma unroll
        for (int p = 0; p < Cfg::PANELS; ++p) {
          const int k = kt * Cfg::BK + p * Cfg::PANEL_K;
          load<(Cfg::CLUSTER_N > 1)>(a_dst + p * Cfg::A_PANEL_BYTES, tma_a, full, k, a_row, w.group,
                                     a_peers);
          load<(Cfg::CLUSTER_M > 1)>(b1_dst + p * Cfg::B_PANEL_BYTES, tma_b1, full, k, b_row,
                                     w.group, b_peers);
          load<(Cfg::CLUSTER_M > 1)>(b2_dst + p * Cfg::B_PANEL_BYTES, tma_b2, full, k, b_row,
                                     w.group, b_peers);
        }
        cursor.advance();
      }
    }
  }

  // Tells every producer that may write this CTA's slot `stage` (all CTAs of the cluster count
  // every consumer) that this warpgroup has finished reading it.
  static __device__ __forceinline__ void release(const Ring& ring, int stage) {
    if (threadIdx.x % 128 != 0) return;
    const unsigned empty = ring.empty + 8 * stage;
    if constexpr (Cfg::CLUSTER_SIZE > 1) {
#pragma unroll
      for (int r = 0; r < Cfg::CLUSTER_SIZE; ++r) kt_hopper::mbarrier_arrive_cluster(empty, r);
    } else {
      kt_hopper::mbarrier_arrive(empty);
    }
  }

  // Runs the k-tiles of one work unit through both accumulators.
  static __device__ __forceinline__ void mainloop(const Ring& ring, RingCursor<Cfg::STAGES>& cursor,
                                                  Accumulators& acc1, Accumulators& acc2,
                                                  int k_count, int consumer) {
    // Descriptors of stage 0, k step 0; a stage, panel or k step only moves the start address,
    // the descriptor's low field (in 16-byte units), so it is added to the 64-bit value.
    const unsigned long long a_desc0 =
        kt_hopper::wgmma_descriptor_sw128(ring.a + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long b1_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b1);
    const unsigned long long b2_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b2);
    int previous_stage = 0;
    for (int kt = 0; kt < k_count; ++kt) {
      kt_hopper::mbarrier_wait(ring.full + 8 * cursor.stage, cursor.phase);
      kt_hopper::wgmma_fence();
      const unsigned long long a_stage = a_desc0 + ((cursor.stage * Cfg::A_STAGE_BYTES) >> 4);
      const unsigned long long b_offset = (cursor.stage * Cfg::B_STAGE_BYTES) >> 4;
#pragma unroll
      for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
        // k step ks: panel ks/4, 32 bytes further per k16 inside the 128-byte swizzled row
        const int panel = ks / 4;
        const int k_bytes = (ks % 4) * 32;
        const unsigned long long b_step = b_offset + ((panel * Cfg::B_PANEL_BYTES + k_bytes) >> 4);
        const int accumulate = (kt > 0 || ks > 0) ? 1 : 0;
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
          const unsigned long long a_desc =
              a_stage + ((panel * Cfg::A_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
          kt_hopper::wgmma_m64k16_ss(acc1[mb], a_desc, b1_desc0 + b_step, accumulate);
          kt_hopper::wgmma_m64k16_ss(acc2[mb], a_desc, b2_desc0 + b_step, accumulate);
        }
      }
      kt_hopper::wgmma_commit();
      // Keep this stage's wgmmas running; the previous stage's are done after the wait.
      if (kt > 0) {
        kt_hopper::wgmma_wait<1>();
        release(ring, previous_stage);
      }
      previous_stage = cursor.stage;
      cursor.advance();
    }
    kt_hopper::wgmma_wait<0>();
    if (k_count > 0) release(ring, previous_stage);
  }

  static __device__ __forceinline__ void consume(const Ring& ring, const Scheduler& scheduler,
                                                 const SplitKReduction<Cfg>& split_k,
                                                 elem_t* __restrict__ C, int M, int N, int k_tiles,
                                                 int consumer) {
    Accumulators acc1, acc2;
    RingCursor<Cfg::STAGES> cursor;
    for (int u = scheduler.first; u < scheduler.total; u += scheduler.stride) {
      const WorkTile w = scheduler.work(u);
      const int k_count =
          Scheduler::slice_end(w.slice, k_tiles) - Scheduler::slice_begin(w.slice, k_tiles);
      if (k_count == 0) {  // an empty K slice (SPLIT_K > k-tiles) contributes zeros
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
#pragma unroll
          for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j) acc1[mb][j] = acc2[mb][j] = 0.0f;
        }
      }
      mainloop(ring, cursor, acc1, acc2, k_count, consumer);
      if (!scheduler.inside(w)) continue;  // a sticking-out tile of the cluster: nothing to store
      if constexpr (Cfg::SPLIT_K > 1) {
        if (!split_k.reduce(acc1, acc2, scheduler.linear_tile(w), w.slice, consumer)) continue;
      }
      elem_t* C_group = C + static_cast<long long>(w.group) * M * N;
      const int row_base = w.m * Cfg::BM + consumer * Cfg::CONSUMER_ROWS;
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
#pragma unroll
        for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j)
          acc1[mb][j] = kt_silu::silu_mul(acc1[mb][j], acc2[mb][j]);
        kt_wgmma::store_m64_block<Cfg::BN>(acc1[mb], C_group, M, N, row_base + mb * 64,
                                           w.n * Cfg::BN);
      }
    }
  }
};

}  // namespace kt_dual

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&                 \
    defined(KT_CONSUMERS) && defined(KT_CLUSTER_M) && defined(KT_CLUSTER_N) &&                  \
    defined(KT_RASTER) && defined(KT_BAND) && defined(KT_GROUP_ORDER) && defined(KT_K_ORDER) && \
    defined(KT_SPLIT_K) && defined(KT_GRID)
using KtDualWgmmaChosen = kt_dual::DualWgmmaConfig<KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CONSUMERS,
                                                   KT_CLUSTER_M, KT_CLUSTER_N, KT_RASTER, KT_BAND,
                                                   KT_GROUP_ORDER, KT_K_ORDER, KT_SPLIT_K>;
static_assert(KT_GRID >= 0,
              "GRID >= 0 (0: one cluster per work unit; k: k CTAs per SM, only in the launch)");

// Entry point; parameters in the order of the template's "args" in manifest.json. workspace and
// semaphores are the family's split-K buffers (unused with SPLIT_K == 1).
extern "C" __global__ void __launch_bounds__(KtDualWgmmaChosen::THREADS, 1)
    kt_dual_gemm_silu_wgmma(unsigned short* __restrict__ C,
                            const __grid_constant__ KtTensorMap tma_a,
                            const __grid_constant__ KtTensorMap tma_b1,
                            const __grid_constant__ KtTensorMap tma_b2, int G, int M, int N, int K,
                            float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  kt_dual::DualWgmmaKernel<KtDualWgmmaChosen>::run(C, &tma_a, &tma_b1, &tma_b2, G, M, N, K,
                                                   workspace, semaphores);
}
#endif
