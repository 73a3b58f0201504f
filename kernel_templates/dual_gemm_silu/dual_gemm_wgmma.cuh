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
#include "hopper_wgmma_ops.cuh"
#include "silu.cuh"
#include "warp_specialized.cuh"
#include "wgmma_store.cuh"

namespace kt_dual {

using kt_mma::elem_t;
using kt_sched::WorkTile;
using kt_ws::RingCursor;

// Shared addresses of the ring: stage s of A at a + s*A_STAGE_BYTES, of B1 at b1 + s*B_STAGE_BYTES
// (B2 likewise).
template <int STAGES>
struct Ring {
  unsigned a, b1, b2;
  kt_ws::RingBarriers<STAGES> barriers;
};

template <class Cfg>
struct DualWgmmaKernel {
  using Scheduler = typename Cfg::Scheduler;
  using Accumulators = float[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];
  using DualRing = Ring<Cfg::STAGES>;

  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b1, const KtTensorMap* tma_b2,
                                             int G, int M, int N, int K, float* workspace,
                                             unsigned* semaphores) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // 128B-swizzled tiles must start on 1024-byte boundaries (the descriptors' base offset is 0).
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const unsigned barriers = base + Cfg::BARRIER_OFFSET;
    const DualRing ring{base + Cfg::A_OFFSET,
                        base + Cfg::B1_OFFSET,
                        base + Cfg::B2_OFFSET,
                        {barriers, barriers + Cfg::STAGES * 8}};
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;
    // Every consumer of the cluster reads each slot: peers multicast into it.
    kt_ws::start<Cfg::CLUSTER_SIZE>(
        [&] { ring.barriers.init(Cfg::CONSUMERS * Cfg::CLUSTER_SIZE); });

    const int rank_m = static_cast<int>(cta_rank) % Cfg::CLUSTER_M;
    const int rank_n = static_cast<int>(cta_rank) / Cfg::CLUSTER_M;
    const Scheduler scheduler(G, M, N, rank_m, rank_n,
                              static_cast<int>(blockIdx.x) / Cfg::CLUSTER_SIZE,
                              static_cast<int>(gridDim.x) / Cfg::CLUSTER_SIZE);
    const int k_tiles = kt_sched::cdiv(K, Cfg::BK);
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { produce(ring, scheduler, tma_a, tma_b1, tma_b2, k_tiles); },
        [&](int consumer) {
          const SplitKReduction<Cfg> split_k{workspace, semaphores,
                                             base + Cfg::FLAG_OFFSET + 4 * consumer};
          consume(ring, scheduler, split_k, C, M, N, k_tiles, consumer);
        });
    kt_ws::finish<Cfg::CLUSTER_SIZE>();
  }

  static __device__ __forceinline__ void produce(const DualRing& ring, const Scheduler& scheduler,
                                                 const KtTensorMap* tma_a,
                                                 const KtTensorMap* tma_b1,
                                                 const KtTensorMap* tma_b2, int k_tiles) {
    using Peers = kt_ws::ClusterPeers<Cfg::CLUSTER_M, Cfg::CLUSTER_N>;
    constexpr bool kShareA = Cfg::CLUSTER_N > 1;  // the CTAs of a tile row share A
    constexpr bool kShareB = Cfg::CLUSTER_M > 1;  // those of a tile column share B1 and B2
    kt_hopper::prefetch_tensormap(tma_a);
    kt_hopper::prefetch_tensormap(tma_b1);
    kt_hopper::prefetch_tensormap(tma_b2);
    const unsigned short a_peers = Peers::row(scheduler.rank_m);
    const unsigned short b_peers = Peers::column(scheduler.rank_n);
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
        const unsigned full = ring.barriers.acquire(cursor, Cfg::STAGE_BYTES);
        const unsigned a_dst = ring.a + cursor.stage * Cfg::A_STAGE_BYTES + a_slice_row * 128;
        const unsigned b1_dst = ring.b1 + cursor.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
        const unsigned b2_dst = ring.b2 + cursor.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
#pragma unroll
        for (int p = 0; p < Cfg::PANELS; ++p) {
          const int k = kt * Cfg::BK + p * Cfg::PANEL_K;
          kt_ws::tma_load_3d<kShareA>(a_dst + p * Cfg::A_PANEL_BYTES, tma_a, full, k, a_row,
                                      w.group, a_peers);
          kt_ws::tma_load_3d<kShareB>(b1_dst + p * Cfg::B_PANEL_BYTES, tma_b1, full, k, b_row,
                                      w.group, b_peers);
          kt_ws::tma_load_3d<kShareB>(b2_dst + p * Cfg::B_PANEL_BYTES, tma_b2, full, k, b_row,
                                      w.group, b_peers);
        }
        cursor.advance();
      }
    }
  }

  // Runs the k-tiles of one work unit through both accumulators: per k16 step the consumer's m64
  // blocks of A against B1 into acc1 and against B2 into acc2, sharing the A operand.
  static __device__ __forceinline__ void mainloop(const DualRing& ring,
                                                  RingCursor<Cfg::STAGES>& cursor,
                                                  Accumulators& acc1, Accumulators& acc2,
                                                  int k_count, int consumer) {
    // Descriptors of stage 0, k step 0; a stage, panel or k step only moves the start address,
    // the descriptor's low field (in 16-byte units), so it is added to the 64-bit value.
    const unsigned long long a_desc0 =
        kt_hopper::wgmma_descriptor_sw128(ring.a + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long b1_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b1);
    const unsigned long long b2_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b2);
    const int last_stage = kt_ws::wgmma_ring_loop<Cfg::CLUSTER_SIZE>(
        ring.barriers, cursor, k_count, [&](int stage, bool first) {
          const unsigned long long a_stage = a_desc0 + ((stage * Cfg::A_STAGE_BYTES) >> 4);
          const unsigned long long b_offset = (stage * Cfg::B_STAGE_BYTES) >> 4;
#pragma unroll
          for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
            // k step ks: panel ks/4, 32 bytes further per k16 inside the 128-byte swizzled row
            const int panel = ks / 4;
            const int k_bytes = (ks % 4) * 32;
            const unsigned long long b_step =
                b_offset + ((panel * Cfg::B_PANEL_BYTES + k_bytes) >> 4);
            const int accumulate = (!first || ks > 0) ? 1 : 0;
#pragma unroll
            for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
              const unsigned long long a_desc =
                  a_stage + ((panel * Cfg::A_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
              kt_hopper::wgmma_m64k16_ss(acc1[mb], a_desc, b1_desc0 + b_step, accumulate);
              kt_hopper::wgmma_m64k16_ss(acc2[mb], a_desc, b2_desc0 + b_step, accumulate);
            }
          }
        });
    kt_hopper::wgmma_wait<0>();
    if (last_stage >= 0) ring.barriers.template release<128, Cfg::CLUSTER_SIZE>(last_stage);
  }

  static __device__ __forceinline__ void consume(const DualRing& ring, const Scheduler& scheduler,
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
