// C[M,N] = A[M,K] * B[N,K]^T for Hopper (sm_90a) large shapes: TMA loads into an mbarrier ring
// fed by a producer warpgroup, and two "ping-pong" consumer warpgroups that each own a whole
// BM x BN tile and take turns: while one runs its tile's wgmma main loop, the other finishes its
// previous tile (epilogue), so the tensor cores stay busy through epilogues. The turn order is
// kept with named barriers (consumer c waits on ORDER_BARRIER + c before its main loop and hands
// the turn over after issuing its last wgmma).
//
// Persistent: each CTA (cluster) walks the work list of gemm_pingpong_schedule.cuh, item j for
// consumer j % 2, the producer loading every item's k-tiles in list order into one STAGES-deep
// ring (a consumer skips the ring slots of the other's items). Optional stream-K
// (STREAM_K) splits the tiles of the partial last wave(s) by k-iterations over all CTAs; partial
// tiles go through the family's workspace (one slot of BM*BN floats per CTA) and a per-tile
// counter in `semaphores` that the finalising CTA re-zeroes.
//
// Epilogue (EPILOGUE): 0 stores C straight from registers (bounds-checked, any N); 1 goes
// through a shared staging tile and TMA tensor stores (clipped by the copy engine), which needs
// N % 8 == 0 for the tensor map's row pitch; with any other N (the family's ragged smoke shape)
// variant 1 falls back to 0 at run time, and the manifest hands it a small valid dummy map.
//
// Clusters of CLUSTER_M x CLUSTER_N CTAs (at most 2) share A or B tiles through TMA multicast as
// in gemm_wgmma.cuh.
//
// Launch: grid (CTAs, 1, 1), a multiple of the cluster size and at most one CTA per SM with
// stream-K; 384 threads; PingpongConfig::SMEM_BYTES + 1024 bytes (alignment) of dynamic shared
// memory. Tensor maps: A over [M][K] box {64, BM/CLUSTER_N}, B over [N][K] box
// {64, BN/CLUSTER_M}, both 128B swizzle; C over [M][N] box {64, BM}, 128B swizzle.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_pingpong.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

#include "gemm_pingpong_config.cuh"
#include "gemm_stream_k.cuh"
#include "gemm_tma_store_epilogue.cuh"
#include "gemm_work_list.cuh"
#include "hopper_primitives.cuh"
#include "hopper_wgmma_ops.cuh"
#include "wgmma_store.cuh"

namespace kt_pingpong {

using kt_mma::elem_t;
using kt_wgmma::cdiv_int;
using kt_wgmma::WorkItem;
using kt_wgmma::WorkList;

struct Ring {
  unsigned a, b, full, empty;
};

// Ring slot and phase of the p-th k-tile the producer loads (counted over the whole work list).
template <int STAGES>
struct RingSlot {
  int stage;
  unsigned phase;
  __device__ __forceinline__ explicit RingSlot(int p)
      : stage(p % STAGES), phase(static_cast<unsigned>(p / STAGES) & 1u) {}
};

struct Outputs {
  elem_t* C;
  const KtTensorMap* map_c;
  float* workspace;
  unsigned* semaphores;
  int M, N;
};

template <class Cfg>
struct PingpongKernel {
  using Acc = float[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];

  static __device__ __forceinline__ void run(const Outputs& out, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const Ring ring{base + Cfg::A_OFFSET, base + Cfg::B_OFFSET, base + Cfg::BARRIER_OFFSET,
                    base + Cfg::BARRIER_OFFSET + Cfg::STAGES * 8};
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;

    if (threadIdx.x == 0) {
      for (int s = 0; s < Cfg::STAGES; ++s) {
        kt_hopper::mbarrier_init(ring.full + 8 * s, 1);  // the producer's expect_tx arrival
        // Each slot is read by one consumer per CTA; multicast writes it in every CTA.
        kt_hopper::mbarrier_init(ring.empty + 8 * s, Cfg::CLUSTER_SIZE);
      }
      kt_hopper::fence_mbarrier_init();
    }
    if constexpr (Cfg::CLUSTER_SIZE > 1) {
      kt_hopper::cluster_sync();
    } else {
      __syncthreads();
    }

    const WorkList<Cfg> work(out.M, out.N, K, cta_rank);
    const int warpgroup = static_cast<int>(threadIdx.x) / 128;
    if (warpgroup == 0) {
      kt_hopper::setmaxnreg_dec<Cfg::PRODUCER_REGISTERS>();
      if (threadIdx.x == 0) produce(ring, work, tma_a, tma_b);
    } else {
      kt_hopper::setmaxnreg_inc<Cfg::CONSUMER_REGISTERS>();
      consume(ring, work, out, base + Cfg::C_OFFSET + (warpgroup - 1) * Cfg::C_STAGE_BYTES,
              warpgroup - 1);
    }
    if constexpr (Cfg::CLUSTER_SIZE > 1) kt_hopper::cluster_sync();
  }

  static __device__ __forceinline__ unsigned short row_peers(int rank_m) {
    unsigned mask = 0;
#pragma unroll
    for (int j = 0; j < Cfg::CLUSTER_N; ++j) mask |= 1u << (rank_m + Cfg::CLUSTER_M * j);
    return static_cast<unsigned short>(mask);
  }
  static __device__ __forceinline__ unsigned short column_peers(int rank_n) {
    return static_cast<unsigned short>(((1u << Cfg::CLUSTER_M) - 1u) << (Cfg::CLUSTER_M * rank_n));
  }

  static __device__ __forceinline__ void produce(const Ring& ring, const WorkList<Cfg>& work,
                                                 const KtTensorMap* tma_a,
                                                 const KtTensorMap* tma_b) {
    kt_hopper::prefetch_tensormap(tma_a);
    kt_hopper::prefetch_tensormap(tma_b);
    const unsigned short a_peers = row_peers(work.raster.rank_m);
    const unsigned short b_peers = column_peers(work.raster.rank_n);
    const int a_slice_row = work.raster.rank_n * Cfg::A_BOX_ROWS;
    const int b_slice_row = work.raster.rank_m * Cfg::B_BOX_ROWS;
    int p = 0;
    const int items = work.items();
    for (int j = 0; j < items; ++j) {
      const WorkItem w = work.item(j);
      const int a_row = w.tile.m * Cfg::BM + a_slice_row;
      const int b_row = w.tile.n * Cfg::BN + b_slice_row;
      for (int kt = w.k_begin; kt < w.k_end; ++kt, ++p) {
        const RingSlot<Cfg::STAGES> slot(p);
        const unsigned full = ring.full + 8 * slot.stage;
        kt_hopper::mbarrier_wait(ring.empty + 8 * slot.stage, slot.phase ^ 1u);
        kt_hopper::mbarrier_arrive_expect_tx(full, Cfg::STAGE_BYTES);
        const unsigned a_dst = ring.a + slot.stage * Cfg::A_STAGE_BYTES + a_slice_row * 128;
        const unsigned b_dst = ring.b + slot.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
#pragma unroll
        for (int panel = 0; panel < Cfg::PANELS; ++panel) {
          const int k = kt * Cfg::BK + panel * Cfg::PANEL_K;
          if constexpr (Cfg::CLUSTER_N > 1) {
            kt_hopper::tma_load_2d_multicast(a_dst + panel * Cfg::A_PANEL_BYTES, tma_a, full, k,
                                             a_row, a_peers);
          } else {
            kt_hopper::tma_load_2d(a_dst + panel * Cfg::A_PANEL_BYTES, tma_a, full, k, a_row);
          }
          if constexpr (Cfg::CLUSTER_M > 1) {
            kt_hopper::tma_load_2d_multicast(b_dst + panel * Cfg::B_PANEL_BYTES, tma_b, full, k,
                                             b_row, b_peers);
          } else {
            kt_hopper::tma_load_2d(b_dst + panel * Cfg::B_PANEL_BYTES, tma_b, full, k, b_row);
          }
        }
      }
    }
  }

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

  // Issues the wgmmas of k-tiles at ring positions [p, p + count); returns with the last stage's
  // batch still running (its slot in `last_stage`), every earlier slot released.
  static __device__ __forceinline__ void mainloop(const Ring& ring, Acc& acc, int p, int count,
                                                  int& last_stage) {
    const unsigned long long a_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.a);
    const unsigned long long b_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b);
    int previous_stage = 0;
    for (int kt = 0; kt < count; ++kt) {
      const RingSlot<Cfg::STAGES> slot(p + kt);
      kt_hopper::mbarrier_wait(ring.full + 8 * slot.stage, slot.phase);
      kt_hopper::wgmma_fence();
      const unsigned long long a_stage = a_desc0 + ((slot.stage * Cfg::A_STAGE_BYTES) >> 4);
      const unsigned long long b_stage = b_desc0 + ((slot.stage * Cfg::B_STAGE_BYTES) >> 4);
#pragma unroll
      for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
        const int panel = ks / 4;
        const int k_bytes = (ks % 4) * 32;
        const unsigned long long b_desc = b_stage + ((panel * Cfg::B_PANEL_BYTES + k_bytes) >> 4);
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
          const unsigned long long a_desc =
              a_stage + ((panel * Cfg::A_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
          kt_hopper::wgmma_m64k16_ss(acc[mb], a_desc, b_desc, (kt > 0 || ks > 0) ? 1 : 0);
        }
      }
      kt_hopper::wgmma_commit();
      if (kt > 0) {
        kt_hopper::wgmma_wait<1>();
        release(ring, previous_stage);
      }
      previous_stage = slot.stage;
    }
    last_stage = previous_stage;
  }

  static __device__ __forceinline__ void consume(const Ring& ring, const WorkList<Cfg>& work,
                                                 const Outputs& out, unsigned c_stage,
                                                 int consumer) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const unsigned epilogue_barrier = Cfg::EPILOGUE_BARRIER + consumer;
    const bool tma_store = Cfg::EPILOGUE == kStoreTma && (out.N % 8) == 0;
    const int items = work.items();
    // Consumer 0 has the first turn: consumer 1 hands it over (balanced: every sync has an
    // arrival, so no barrier is left half-complete at exit).
    if (consumer == 1 && items > 0) kt_hopper::named_barrier_arrive(Cfg::ORDER_BARRIER, 256);
    Acc acc;
    int p = 0;
    for (int j = 0; j < items; ++j) {
      const WorkItem w = work.item(j);
      const int count = w.k_end - w.k_begin;
      if (j % 2 != consumer) {
        p += count;
        continue;
      }
      kt_hopper::named_barrier_sync(Cfg::ORDER_BARRIER + consumer, 256);
      int last_stage;
      mainloop(ring, acc, p, count, last_stage);
      if (j + 1 < items) kt_hopper::named_barrier_arrive(Cfg::ORDER_BARRIER + (1 - consumer), 256);
      kt_hopper::wgmma_wait<0>();
      release(ring, last_stage);
      p += count;

      if constexpr (Cfg::STREAM_K) {
        // One slot of BM*BN floats per CTA; one warpgroup per part and per finalised tile.
        if (w.k_begin > 0) {  // a later part of a tile another CTA finalises
          kt_wgmma::contribute_partial<Cfg::ACC>(
              &acc[0][0], out.workspace + static_cast<long long>(blockIdx.x) * (Cfg::BM * Cfg::BN),
              tile_counter(out, w), epilogue_barrier);
          continue;
        }
        if (w.k_end < work.k_tiles)
          kt_wgmma::gather_partials<Cfg::ACC, 1, 1, Cfg::BM * Cfg::BN>(
              &acc[0][0], work, w, out.workspace, 0, tile_counter(out, w), epilogue_barrier);
      }
      const int row0 = w.tile.m * Cfg::BM;
      const int col0 = w.tile.n * Cfg::BN;
      if constexpr (Cfg::EPILOGUE == kStoreTma) {
        // The previous tile's store has finished reading the staging tile.
        if (t == 0) kt_hopper::bulk_wait_group_read<0>();
        kt_hopper::named_barrier_sync(epilogue_barrier, 128);
        kt_tma_store::stage_tile<Cfg::BM, Cfg::BN>(acc, c_stage);
        kt_hopper::fence_proxy_async_shared();  // st.shared before the TMA engine reads them
        kt_hopper::named_barrier_sync(epilogue_barrier, 128);
        if (tma_store) {
          if (t == 0)
            kt_tma_store::store_staged_tile<Cfg::BM, Cfg::BN>(out.map_c, c_stage, row0, col0);
        } else {
          kt_tma_store::copy_staged_tile<Cfg::BM, Cfg::BN>(c_stage, out.C, out.M, out.N, row0,
                                                           col0);
        }
      } else {
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
          kt_wgmma::store_m64_block<Cfg::BN>(acc[mb], out.C, out.M, out.N, row0 + mb * 64, col0);
      }
    }
    if (tma_store && t == 0) kt_hopper::bulk_wait_group<0>();
  }

  static __device__ __forceinline__ unsigned* tile_counter(const Outputs& out, const WorkItem& w) {
    return out.semaphores + w.tile.m * cdiv_int(out.N, Cfg::BN) + w.tile.n;
  }
};

}  // namespace kt_pingpong

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&                  \
    defined(KT_CLUSTER_M) && defined(KT_CLUSTER_N) && defined(KT_RASTER) && defined(KT_GROUP) && \
    defined(KT_EPILOGUE) && defined(KT_SPLIT_K)
using KtPingpongChosen =
    kt_pingpong::PingpongConfig<KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CLUSTER_M, KT_CLUSTER_N,
                                KT_RASTER, KT_GROUP, KT_EPILOGUE, KT_SPLIT_K == 2>;
static_assert(KT_SPLIT_K == 1 || KT_SPLIT_K == 2,
              "SPLIT_K is 1 (data-parallel tiles) or 2 (stream-K for the partial last wave)");

// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtPingpongChosen::THREADS, 1)
    kt_gemm_pingpong(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                     const __grid_constant__ KtTensorMap tma_b,
                     const __grid_constant__ KtTensorMap tma_c, int M, int N, int K,
                     float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  const kt_pingpong::Outputs out{C, &tma_c, workspace, semaphores, M, N};
  kt_pingpong::PingpongKernel<KtPingpongChosen>::run(out, &tma_a, &tma_b, K);
}
#endif
