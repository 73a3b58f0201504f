// C[M,N] = (A[M,K] * sa) (B[N,K] * sb)^T for Hopper (sm_90a): A and B fp8 (A e4m3 or e5m2, B
// e4m3), row-major and K-contiguous like a Linear layer's activations and weights, C bf16, fp32
// accumulation, with wgmma m64nBNk32, TMA and warp specialisation.
//
// Scales (SCALING): kTensorScales, one fp32 factor per tensor (SA[0], SB[0]) applied in the
// epilogue; kBlockScales, DeepSeek-V3's fine-grained ones: SA is [cdiv(K,128)][M] (one factor per
// 128 k-elements of each row of A, M contiguous), SB [cdiv(N,128)][cdiv(K,128)] (one per 128x128
// block of B); each k-tile (BK = 128, one scale block) is summed by the tensor cores alone and
// then added into fp32 registers times sa(row) * sb(block).
//
// Promotion (PROMOTE): the tensor cores sum fp8 products with fewer bits than fp32 keeps, so over
// long K the error grows; with PROMOTE = p > 0 their partial sums are added into a second set of
// fp32 accumulators every p k-tiles (block scales always promote, every k-tile). Promoting waits
// for the warpgroup's wgmmas, which the other consumer warpgroup's wgmmas cover.
//
// The rest is the 16-bit warp-specialised GEMM's (gemm_wgmma.cuh): one producer warp group with
// TMA loads into a STAGES-deep mbarrier ring (gemm_wgmma_mainloop.cuh, unchanged: a 128-byte
// swizzled row is 128 fp8 k-elements), CONSUMERS consumer warpgroups splitting the tile's rows,
// the persistent raster-ordered work list with stream-K for a partial last wave (decode shapes:
// fewer tiles than SMs are all split over the grid), clusters with TMA multicast, and an
// epilogue from registers or through shared memory and TMA stores.
//
// Launch: grid (CTAs, 1, 1), (CONSUMERS+1)*128 threads, STAGES*(BM+BN)*BK + (EPILOGUE ? 2*BM*BN
// : 0) + 2048 bytes of dynamic shared memory. A and B arrive as tensor maps over [M][K] and
// [N][K] bytes with boxes {128, BM/CLUSTER_N} and {128, BN/CLUSTER_M}, C over [M][N] bf16 with
// box {64, BM/CONSUMERS}, all 128B swizzle.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_fp8_wgmma.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

// The output is bf16 whatever the fp8 input: the shared epilogue stores elem_t.
#define KT_DTYPE_BF16 1

#include "gemm_fp8_config.cuh"
#include "gemm_stream_k.cuh"
#include "gemm_wgmma_mainloop.cuh"
#include "hopper_wgmma_fp8_ops.cuh"

namespace kt_fp8 {

struct Problem {
  unsigned short* C;
  const KtTensorMap* map_c;
  const float* SA;
  const float* SB;
  float* workspace;
  unsigned* semaphores;
  int M, N, K;
};

// The wgmmas of one ring slot (gemm_wgmma_mainloop.cuh's loop): wgmma m64nBNk32 with fp8 operands.
template <class Cfg>
__device__ __forceinline__ void issue_slot(float (&acc)[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK],
                                           unsigned long long a_desc0, unsigned long long b_desc0,
                                           int stage, bool overwrite) {
  kt_wgmma::issue_slot_with<Cfg>(
      acc, a_desc0, b_desc0, stage, overwrite,
      [](float(&d)[Cfg::ACC_PER_BLOCK], unsigned long long a, unsigned long long b,
         int accumulate) { kt_hopper::wgmma_m64k32_fp8_ss(d, a, b, accumulate); });
}

// The scale factors of one k-tile for a thread's accumulators: its two rows per m64 block (sa)
// and the tile's block of B (sb), folded into one factor per row. Rows past M read nothing.
template <class Cfg>
struct BlockScales {
  float row[Cfg::M_BLOCKS][2];

  __device__ __forceinline__ void load(const Problem& p, int row0, int n0, int k_tile) {
#if defined(KT_TEST_WRONG_SCALE_BLOCK)
    // The GPU tests' planted fault: k-block 1 takes k-block 0's scales, which validation must
    // catch.
    if (k_tile == 1) k_tile = 0;
#endif
    const int t = static_cast<int>(threadIdx.x) % 128;
    const int k_blocks = kt_wgmma::cdiv_int(p.K, kScaleBlock);
    const float sb = __ldg(p.SB + static_cast<long long>(n0 / kScaleBlock) * k_blocks + k_tile);
    const float* sa = p.SA + static_cast<long long>(k_tile) * p.M;
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + mb * 64 + (t / 32) * 16 + (t % 32) / 4 + 8 * h;
        row[mb][h] = r < p.M ? __ldg(sa + r) * sb : 0.0f;
      }
  }
};

// The accumulators a tile's result is in: the promoted ones or the tensor cores' own.
template <bool kPromoting, class Acc>
__device__ __forceinline__ Acc& result_of(Acc& total, Acc& acc) {
  if constexpr (kPromoting)
    return total;
  else
    return acc;
}

template <class Cfg>
struct Fp8Kernel {
  using Ring = kt_wgmma::GemmRing<Cfg::STAGES>;
  using Acc = float[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK];

  static __device__ __forceinline__ void run(const Problem& p, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const Ring ring = kt_wgmma::gemm_ring<Cfg>(base);
    const unsigned cta_rank = Cfg::CLUSTER_SIZE > 1 ? kt_hopper::cluster_ctarank() : 0u;
    kt_ws::start<Cfg::CLUSTER_SIZE>(
        [&] { ring.barriers.init(Cfg::CONSUMERS * Cfg::CLUSTER_SIZE); });
    const kt_wgmma::WorkList<Cfg> work(p.M, p.N, p.K, cta_rank);
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { kt_wgmma::produce_tiles<Cfg>(ring, work, tma_a, tma_b); },
        [&](int consumer) {
          consume(ring, work, p, base + Cfg::C_OFFSET + consumer * Cfg::C_STAGE_BYTES, consumer);
        });
    kt_ws::finish<Cfg::CLUSTER_SIZE>();
  }

  // k-tiles [w.k_begin, w.k_end) of a tile into `total` (promoting) or `acc` (not): the ring loop
  // of gemm_wgmma.cuh, waiting for the wgmmas at each promotion.
  static __device__ __forceinline__ void mainloop(const Ring& ring,
                                                  kt_ws::RingCursor<Cfg::STAGES>& cursor,
                                                  const kt_wgmma::WorkItem& w, const Problem& p,
                                                  int row0, unsigned long long a_desc0,
                                                  unsigned long long b_desc0, Acc& acc,
                                                  Acc& total) {
    const int count = w.k_end - w.k_begin;
    if constexpr (!Cfg::PROMOTING) {
      const int last = kt_ws::wgmma_ring_loop<Cfg::CLUSTER_SIZE>(
          ring.barriers, cursor, count,
          [&](int stage, bool first) { issue_slot<Cfg>(acc, a_desc0, b_desc0, stage, first); });
      kt_hopper::wgmma_wait<0>();
      if (last >= 0) ring.barriers.template release<128, Cfg::CLUSTER_SIZE>(last);
    } else {
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
        for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j) total[mb][j] = 0.0f;
      // Groups of PROMOTE k-tiles, each the 16-bit GEMM's ring loop (one wgmma group in flight
      // while the next slot lands), then a wait for the group and its promotion: the waits stay
      // outside divergent code, so ptxas keeps the wgmma pipeline.
      // Block scales: a k-tile's factors are loaded a k-tile ahead, so their latency (an L2 hit
      // is longer than a k-tile's wgmmas) hides behind the previous tile's work.
      BlockScales<Cfg> scales, next;
      const int n0 = w.tile.n * Cfg::BN;
      if constexpr (Cfg::SCALING == kBlockScales) next.load(p, row0, n0, w.k_begin);
      for (int g = 0; g < count; g += Cfg::PROMOTE) {
        const int tiles = count - g < Cfg::PROMOTE ? count - g : Cfg::PROMOTE;
        if constexpr (Cfg::SCALING == kBlockScales) {
          scales = next;
          if (g + 1 < count) next.load(p, row0, n0, w.k_begin + g + 1);
        }
        const int last = kt_ws::wgmma_ring_loop<Cfg::CLUSTER_SIZE>(
            ring.barriers, cursor, tiles,
            [&](int stage, bool first) { issue_slot<Cfg>(acc, a_desc0, b_desc0, stage, first); });
        kt_hopper::wgmma_wait<0>();
        ring.barriers.template release<128, Cfg::CLUSTER_SIZE>(last);
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
          for (int j = 0; j < Cfg::ACC_PER_BLOCK; ++j) {
            // element j of a block is row 8*((j/2)%2) further (the accumulator layout)
            const float factor = Cfg::SCALING == kBlockScales ? scales.row[mb][(j / 2) % 2] : 1.0f;
            total[mb][j] = fmaf(acc[mb][j], factor, total[mb][j]);
          }
      }
    }
  }

  static __device__ __forceinline__ void consume(const Ring& ring,
                                                 const kt_wgmma::WorkList<Cfg>& work,
                                                 const Problem& p, unsigned c_stage, int consumer) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const unsigned barrier = Cfg::CONSUMER_BARRIER + consumer;
    const bool tma_store = Cfg::EPILOGUE == kt_wgmma::kStoreTma && (p.N % 8) == 0;
    const float tensor_scale = Cfg::SCALING == kTensorScales ? __ldg(p.SA) * __ldg(p.SB) : 1.0f;
    Acc acc;
    Acc total;  // promoted sums (PROMOTING only; otherwise unused and removed)
    Acc& result = result_of<Cfg::PROMOTING>(total, acc);
    const unsigned long long a_desc0 =
        kt_hopper::wgmma_descriptor_sw128(ring.a + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long b_desc0 = kt_hopper::wgmma_descriptor_sw128(ring.b);
    kt_ws::RingCursor<Cfg::STAGES> cursor;
    const int items = work.items();
    for (int j = 0; j < items; ++j) {
      const kt_wgmma::WorkItem w = work.item(j);
      const int row0 = w.tile.m * Cfg::BM + consumer * Cfg::CONSUMER_ROWS;
      mainloop(ring, cursor, w, p, row0, a_desc0, b_desc0, acc, total);

      // Per-tensor scales are applied after the parts are summed (the sums are linear), block
      // scales already were.
      if constexpr (Cfg::STREAM_K)
        if (!kt_wgmma::settle_cooperative_part<Cfg>(&result[0][0], work, w, p.workspace,
                                                    p.semaphores, p.N, consumer, barrier))
          continue;
      if constexpr (Cfg::SCALING == kTensorScales) {
#pragma unroll
        for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
          for (int e = 0; e < Cfg::ACC_PER_BLOCK; ++e) result[mb][e] *= tensor_scale;
      }
      kt_wgmma::store_tile<Cfg::CONSUMER_ROWS, Cfg::BN, Cfg::EPILOGUE == kt_wgmma::kStoreTma>(
          result, p.C, p.map_c, p.M, p.N, c_stage, barrier, tma_store, row0, w.tile.n * Cfg::BN);
    }
    if (tma_store && t == 0) kt_hopper::bulk_wait_group<0>();
  }
};

}  // namespace kt_fp8

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&              \
    defined(KT_CONSUMERS) && defined(KT_CLUSTER_M) && defined(KT_CLUSTER_N) &&               \
    defined(KT_RASTER) && defined(KT_GROUP) && defined(KT_PROMOTE) && defined(KT_SCALING) && \
    defined(KT_SPLIT_K) && defined(KT_GRID) && defined(KT_EPILOGUE)
using KtFp8Chosen =
    kt_fp8::Fp8Config<KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CONSUMERS, KT_CLUSTER_M, KT_CLUSTER_N,
                      KT_RASTER, KT_GROUP, KT_PROMOTE, KT_SCALING, KT_EPILOGUE, KT_SPLIT_K == 2>;
static_assert(KT_SPLIT_K == 1 || KT_SPLIT_K == 2,
              "SPLIT_K is 1 (whole tiles) or 2 (stream-K for the partial last wave)");
static_assert(KT_GRID >= 0,
              "GRID >= 0 (0: one CTA per tile; k: k CTAs per SM, only in the launch)");

// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtFp8Chosen::THREADS, 1)
    kt_gemm_fp8_wgmma(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                      const __grid_constant__ KtTensorMap tma_b,
                      const __grid_constant__ KtTensorMap tma_c, const float* __restrict__ SA,
                      const float* __restrict__ SB, int M, int N, int K,
                      float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  const kt_fp8::Problem p{C, &tma_c, SA, SB, workspace, semaphores, M, N, K};
  kt_fp8::Fp8Kernel<KtFp8Chosen>::run(p, &tma_a, &tma_b);
}
#endif
