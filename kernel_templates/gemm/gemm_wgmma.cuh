// C[M,N] = A[M,K] * B[N,K]^T for Hopper (sm_90a): A, B, C row-major (A and B K-contiguous),
// bf16 or fp16 in and out, fp32 accumulation, with wgmma, TMA and warp specialisation.
//
// Block: one producer warpgroup and CONSUMERS consumer warpgroups. One producer thread streams
// BMxBK tiles of A and BNxBK tiles of B with TMA (128B swizzle, zero fill past M, N and K) into
// a STAGES-deep shared-memory ring; each slot has a "full" mbarrier (the copies' bytes landed)
// and an "empty" one (every consumer of the cluster finished reading it). Consumer warpgroup c
// owns rows [c*BM/CONSUMERS, (c+1)*BM/CONSUMERS) of the tile and issues wgmma m64nBNk16 from
// the ring, one stage in flight while it waits for the next; then it writes its part of C
// (bounds-checked) while the producer already fills the ring with the next tile's k-tiles.
// setmaxnreg moves registers from the producer to the consumers.
//
// Persistent: each CTA walks the work list of gemm_work_list.cuh (a grid of one CTA per tile runs
// each once); with STREAM_K the tiles of the partial last wave(s) are split by k-iterations over
// all CTAs and fixed up through the family's workspace and semaphores (gemm_stream_k.cuh).
// Clusters of CLUSTER_M x CLUSTER_N CTAs (launched as (CLUSTER_SIZE,1,1)) compute neighbouring
// tiles; CTAs of one tile row share A and of one tile column share B, each loading a slice of the
// shared tile once and multicasting it to its peers.
//
// Epilogue (EPILOGUE): 0 stores C from registers (bounds-checked); 1 stages each consumer's part
// in shared memory and writes it with TMA stores while the producer already loads the next tile
// (needs N % 8 == 0; other N, e.g. the family's ragged smoke shape, fall back to 0 at run time
// and get a small valid dummy map from the manifest).
//
// Launch: grid (CTAs, 1, 1) with CTAs a multiple of CLUSTER_SIZE, (CONSUMERS+1)*128 threads,
// STAGES*(BM+BN)*BK*2 + (EPILOGUE ? BM*BN*2 : 0) + 2048 bytes of dynamic shared memory. A and B
// arrive as tensor maps over [M][K] and [N][K] with boxes {64, BM/CLUSTER_N} and
// {64, BN/CLUSTER_M}, C over [M][N] with box {64, BM/CONSUMERS}, all 128B swizzle.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

#include "gemm_stream_k.cuh"
#include "gemm_tma_store_epilogue.cuh"
#include "gemm_wgmma_config.cuh"
#include "gemm_wgmma_mainloop.cuh"
#include "wgmma_store.cuh"

namespace kt_wgmma {

// Where C and the stream-K buffers are.
struct Outputs {
  elem_t* C;
  const KtTensorMap* map_c;
  float* workspace;
  unsigned* semaphores;
  int M, N;
};

template <class Cfg>
struct WgmmaKernel {
  using Ring = GemmRing<Cfg::STAGES>;

  static __device__ __forceinline__ void run(const Outputs& out, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // 128B-swizzled tiles must start on 1024-byte boundaries (the descriptors' base offset is 0).
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const Ring ring = gemm_ring<Cfg>(base);
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;
    // Every consumer of the cluster reads each slot: peers multicast into it.
    kt_ws::start<Cfg::CLUSTER_SIZE>(
        [&] { ring.barriers.init(Cfg::CONSUMERS * Cfg::CLUSTER_SIZE); });

    const WorkList<Cfg> work(out.M, out.N, K, cta_rank);
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { produce_tiles<Cfg>(ring, work, tma_a, tma_b); },
        [&](int consumer) {
          consume(ring, work, out, base + Cfg::C_OFFSET + consumer * Cfg::C_STAGE_BYTES, consumer);
        });
    kt_ws::finish<Cfg::CLUSTER_SIZE>();
  }

  static __device__ __forceinline__ void consume(const Ring& ring, const WorkList<Cfg>& work,
                                                 const Outputs& out, unsigned c_stage,
                                                 int consumer) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const unsigned barrier = Cfg::CONSUMER_BARRIER + consumer;
    const bool tma_store = Cfg::EPILOGUE == kStoreTma && (out.N % 8) == 0;
    float acc[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];
    // Consumer c reads rows [c*CONSUMER_ROWS, (c+1)*CONSUMER_ROWS) of each A stage.
    const unsigned long long a_desc0 =
        kt_hopper::wgmma_descriptor_sw128(ring.a + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long b_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b);
    kt_ws::RingCursor<Cfg::STAGES> cursor;
    const int items = work.items();
    for (int j = 0; j < items; ++j) {
      const WorkItem w = work.item(j);
      const int last_stage = kt_ws::wgmma_ring_loop<Cfg::CLUSTER_SIZE>(
          ring.barriers, cursor, w.k_end - w.k_begin,
          [&](int stage, bool first) { issue_slot<Cfg>(acc, a_desc0, b_desc0, stage, first); });
      kt_hopper::wgmma_wait<0>();
      if (last_stage >= 0) ring.barriers.template release<128, Cfg::CLUSTER_SIZE>(last_stage);

      if constexpr (Cfg::STREAM_K)
        if (!settle_cooperative_part<Cfg>(&acc[0][0], work, w, out.workspace, out.semaphores, out.N,
                                          consumer, barrier))
          continue;

      store_tile<Cfg::CONSUMER_ROWS, Cfg::BN, Cfg::EPILOGUE == kStoreTma>(
          acc, out.C, out.map_c, out.M, out.N, c_stage, barrier, tma_store,
          w.tile.m * Cfg::BM + consumer * Cfg::CONSUMER_ROWS, w.tile.n * Cfg::BN);
    }
    if (tma_store && t == 0) kt_hopper::bulk_wait_group<0>();
  }
};

}  // namespace kt_wgmma

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&              \
    defined(KT_CONSUMERS) && defined(KT_CLUSTER_M) && defined(KT_CLUSTER_N) &&               \
    defined(KT_RASTER) && defined(KT_GROUP) && defined(KT_K_ORDER) && defined(KT_SPLIT_K) && \
    defined(KT_GRID) && defined(KT_EPILOGUE)
using KtWgmmaChosen =
    kt_wgmma::WgmmaConfig<KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CONSUMERS, KT_CLUSTER_M, KT_CLUSTER_N,
                          KT_RASTER, KT_GROUP, KT_K_ORDER, KT_EPILOGUE, KT_SPLIT_K == 2>;
static_assert(KT_SPLIT_K == 1 || KT_SPLIT_K == 2,
              "SPLIT_K is 1 (whole tiles) or 2 (stream-K for the partial last wave)");
static_assert(KT_GRID >= 0,
              "GRID >= 0 (0: one CTA per tile; k: k CTAs per SM, only in the launch)");

// Entry point; parameters in the order of the template's "args" in manifest.json. workspace and
// semaphores are the family's split-K buffers: stream-K partial tiles and per-tile counters.
extern "C" __global__ void __launch_bounds__(KtWgmmaChosen::THREADS, 1)
    kt_gemm_wgmma(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                  const __grid_constant__ KtTensorMap tma_b,
                  const __grid_constant__ KtTensorMap tma_c, int M, int N, int K,
                  float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  const kt_wgmma::Outputs out{C, &tma_c, workspace, semaphores, M, N};
  kt_wgmma::WgmmaKernel<KtWgmmaChosen>::run(out, &tma_a, &tma_b, K);
}
#endif
