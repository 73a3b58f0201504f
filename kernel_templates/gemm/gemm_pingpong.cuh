// C[M,N] = A[M,K] * B[N,K]^T for Hopper (sm_90a) large shapes: TMA loads into an mbarrier ring
// fed by a producer warpgroup, and two "ping-pong" consumer warpgroups that each own a whole
// BM x BN tile and take turns: while one runs its tile's wgmma main loop, the other finishes its
// previous tile (epilogue), so the tensor cores stay busy through epilogues. The turn order is
// kept with named barriers (consumer c waits on ORDER_BARRIER + c before its main loop and hands
// the turn over after issuing its last wgmma).
//
// Persistent: each CTA (cluster) walks the work list of gemm_work_list.cuh, item j for
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
#include "gemm_wgmma_mainloop.cuh"
#include "wgmma_store.cuh"

namespace kt_pingpong {

using kt_mma::elem_t;
using kt_wgmma::cdiv_int;
using kt_wgmma::WorkItem;
using kt_wgmma::WorkList;

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
  using Ring = kt_wgmma::GemmRing<Cfg::STAGES>;

  static __device__ __forceinline__ void run(const Outputs& out, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const Ring ring = kt_wgmma::gemm_ring<Cfg>(base);
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;
    // Each slot is read by one consumer per CTA; multicast writes it in every CTA.
    kt_ws::start<Cfg::CLUSTER_SIZE>([&] { ring.barriers.init(Cfg::CLUSTER_SIZE); });

    const WorkList<Cfg> work(out.M, out.N, K, cta_rank);
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { kt_wgmma::produce_tiles<Cfg>(ring, work, tma_a, tma_b); },
        [&](int consumer) {
          consume(ring, work, out, base + Cfg::C_OFFSET + consumer * Cfg::C_STAGE_BYTES, consumer);
        });
    kt_ws::finish<Cfg::CLUSTER_SIZE>();
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
    // Each consumer reads the whole tile: every row of the A stage.
    const unsigned long long a_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.a);
    const unsigned long long b_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b);
    int p = 0;
    for (int j = 0; j < items; ++j) {
      const WorkItem w = work.item(j);
      const int count = w.k_end - w.k_begin;
      if (j % 2 != consumer) {
        p += count;
        continue;
      }
      kt_hopper::named_barrier_sync(Cfg::ORDER_BARRIER + consumer, 256);
      // The item's k-tiles sit at ring positions [p, p + count) of the producer's order.
      kt_ws::RingCursor<Cfg::STAGES> cursor = kt_ws::RingCursor<Cfg::STAGES>::at(p);
      const int last_stage = kt_ws::wgmma_ring_loop<Cfg::CLUSTER_SIZE>(
          ring.barriers, cursor, count, [&](int stage, bool first) {
            kt_wgmma::issue_slot<Cfg>(acc, a_desc0, b_desc0, stage, first);
          });
      // Hand the turn over with this tile's last wgmmas still running.
      if (j + 1 < items) kt_hopper::named_barrier_arrive(Cfg::ORDER_BARRIER + (1 - consumer), 256);
      kt_hopper::wgmma_wait<0>();
      if (last_stage >= 0) ring.barriers.template release<128, Cfg::CLUSTER_SIZE>(last_stage);
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
      kt_wgmma::store_tile<Cfg::BM, Cfg::BN, Cfg::EPILOGUE == kStoreTma>(
          acc, out.C, out.map_c, out.M, out.N, c_stage, epilogue_barrier, tma_store,
          w.tile.m * Cfg::BM, w.tile.n * Cfg::BN);
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
