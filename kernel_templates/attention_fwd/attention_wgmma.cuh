// Attention forward for Hopper (sm_90a), FlashAttention-3 style: O = softmax(Q Kᵀ * scale
// [causal mask]) V and the row log-sum-exp, Q, K, V, O [B, H, S, HEAD_DIM] row-major 16-bit, fp32
// softmax and accumulation, with TMA, wgmma and warp specialisation.
//
// A CTA owns BLOCK_M query rows of one head. Warpgroup 0 produces: one thread loads the Q tile
// once and streams the K and V tiles of BLOCK_N keys into two STAGES-deep rings with TMA (3-D
// maps over [B*H][S][HEAD_DIM], so rows past S arrive as zeros without touching the next head),
// each slot guarded by a "full" mbarrier (bytes landed) and an "empty" one (every consumer warp
// done reading). Consumer warpgroup c (CONSUMERS of them, setmaxnreg gives them the producer's
// registers) owns BLOCK_M/CONSUMERS rows, 64 per wgmma m-block, and per key block j:
//   issues S_j = Q K_jᵀ (wgmma, both operands from shared memory) and, after rescaling O,
//   O += P_{j-1} V_{j-1} (wgmma, P from registers as the A operand, V the MN-major B operand);
//   waits for S_j only, runs the online softmax on it while P_{j-1} V_{j-1} is still running,
//   then waits for that GEMM and converts the new probabilities to 16 bits in registers.
// With PINGPONG the consumers take turns issuing their GEMMs (named barriers 1..CONSUMERS), so one
// warpgroup's softmax overlaps the others' GEMMs. Causal CTAs stop at the diagonal; only blocks
// crossing it (or the end of the sequence) are masked. The output is normalised at the end and
// leaves through the consumer's own rows of the Q tile with 16-byte stores.
//
// Launch: grid as the manifest's launch formulas (TILE_ORDER decides which grid dimension walks
// the query blocks), (CONSUMERS+1)*128 threads, Cfg::SMEM_BYTES + 1024 bytes of dynamic shared
// memory; Q, K, V as tensor maps over {HEAD_DIM, S, B*H} with boxes {64, BLOCK_M or BLOCK_N, 1}
// and 128B swizzle.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "attention_wgmma.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

#include "attention_softmax.cuh"
#include "attention_wgmma_config.cuh"
#include "hopper_wgmma_ops.cuh"
#include "warp_specialized.cuh"

namespace kt_attn {

using kt_ws::RingCursor;

// Shared addresses of the tiles, the Q tile's barrier and the K and V rings' barriers.
template <int STAGES>
struct AttentionSmem {
  unsigned q, k, v, q_full;
  kt_ws::RingBarriers<STAGES> k_ring, v_ring;
};

template <class Cfg>
struct WgmmaAttentionKernel {
  using Smem = AttentionSmem<Cfg::STAGES>;
  using Ring = kt_ws::RingBarriers<Cfg::STAGES>;
  // A K or V slot frees after one arrival from every consumer warp.
  static constexpr unsigned kReaderWarps = 4 * Cfg::CONSUMERS;
  using Scores = float[Cfg::M_BLOCKS][Cfg::S_ACC];
  using Probabilities = unsigned[Cfg::M_BLOCKS][Cfg::P_REGS];
  using Output = float[Cfg::M_BLOCKS][Cfg::O_ACC];

  static __device__ __forceinline__ void run(elem_t* __restrict__ O, float* __restrict__ lse,
                                             const KtTensorMap* tma_q, const KtTensorMap* tma_k,
                                             const KtTensorMap* tma_v, int seq_len, float scale) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // 128B-swizzled tiles must start on 1024-byte boundaries (the descriptors' base offset is 0).
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const unsigned bars = base + Cfg::BARRIER_OFFSET;
    const Smem sm{base,
                  base + Cfg::K_OFFSET,
                  base + Cfg::V_OFFSET,
                  bars,
                  {bars + 8, bars + 8 + 8 * Cfg::STAGES},
                  {bars + 8 + 16 * Cfg::STAGES, bars + 8 + 24 * Cfg::STAGES}};

    int m_block, bh;
    tile_of_block<Cfg::TILE_ORDER>(m_block, bh);
    const int m_start = m_block * Cfg::BLOCK_M;
    const int key_end = Cfg::CAUSAL ? min(seq_len, m_start + Cfg::BLOCK_M) : seq_len;
    const int n_blocks = (key_end + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N;

    kt_ws::start<1>([&] {
      kt_hopper::mbarrier_init(sm.q_full, 1);
      sm.k_ring.init(kReaderWarps);
      sm.v_ring.init(kReaderWarps);
    });
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { produce(sm, tma_q, tma_k, tma_v, m_start, bh, n_blocks); },
        [&](int consumer) {
          consume(sm, consumer, m_start, bh, n_blocks, seq_len, scale, O, lse);
        });
  }

  // ---- producer ------------------------------------------------------------------------------

  // Loads the BLOCK_N x HEAD_DIM tile at `row` into the ring's next slot.
  static __device__ __forceinline__ void load_tile(unsigned tiles, const Ring& ring,
                                                   RingCursor<Cfg::STAGES>& at,
                                                   const KtTensorMap* map, int row, int bh) {
    const unsigned full = ring.acquire(at, Cfg::KV_TILE_BYTES);
    const unsigned dst = tiles + at.stage * Cfg::KV_TILE_BYTES;
#pragma unroll
    for (int p = 0; p < Cfg::PANELS; ++p)
      kt_hopper::tma_load_3d(dst + p * Cfg::KV_PANEL_BYTES, map, full, 64 * p, row, bh);
    at.advance();
  }

  static __device__ __forceinline__ void produce(const Smem& sm, const KtTensorMap* tma_q,
                                                 const KtTensorMap* tma_k, const KtTensorMap* tma_v,
                                                 int m_start, int bh, int n_blocks) {
    kt_hopper::prefetch_tensormap(tma_q);
    kt_hopper::prefetch_tensormap(tma_k);
    kt_hopper::prefetch_tensormap(tma_v);
    kt_hopper::mbarrier_arrive_expect_tx(sm.q_full, Cfg::Q_BYTES);
#pragma unroll
    for (int p = 0; p < Cfg::PANELS; ++p)
      kt_hopper::tma_load_3d(sm.q + p * Cfg::Q_PANEL_BYTES, tma_q, sm.q_full, 64 * p, m_start, bh);
    RingCursor<Cfg::STAGES> k, v;
    for (int block = 0; block < n_blocks; ++block) {
      load_tile(sm.k, sm.k_ring, k, tma_k, block * Cfg::BLOCK_N, bh);
      load_tile(sm.v, sm.v_ring, v, tma_v, block * Cfg::BLOCK_N, bh);
    }
  }

  // ---- consumers -----------------------------------------------------------------------------

  // Ping-pong: consumer c issues its GEMMs only on its turn (its barrier completes when its own
  // 128 threads and the 128 of the consumer before it have arrived), then hands the turn to the
  // next one, round robin. Every consumer takes the same number of turns.
  static __device__ __forceinline__ void wait_turn(int consumer) {
    if constexpr (Cfg::PINGPONG)
      kt_hopper::named_barrier_sync(Cfg::SCHEDULE_BARRIER + consumer, 256);
  }
  static __device__ __forceinline__ void pass_turn(int consumer, bool last) {
    // The last consumer takes the last turn; its final hand-over would have no taker.
    if constexpr (Cfg::PINGPONG)
      if (!(last && consumer == Cfg::CONSUMERS - 1))
        kt_hopper::named_barrier_arrive(Cfg::SCHEDULE_BARRIER + (consumer + 1) % Cfg::CONSUMERS,
                                        256);
  }

  // Every consumer warp tells the producer it has finished reading a slot.
  static __device__ __forceinline__ void release(const Ring& ring, int stage) {
    ring.template release<32, 1>(stage);
  }

  // S = Q Kᵀ for the consumer's m-blocks; one commit group. q_desc: descriptor of the consumer's
  // first Q row in panel 0; k_desc: of the K slot's panel 0.
  static __device__ __forceinline__ void issue_scores(Scores& s, unsigned long long q_desc,
                                                      unsigned long long k_desc) {
    kt_hopper::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < Cfg::D_STEPS; ++ks) {
      // k step ks: panel ks/4, 32 bytes further per k16 inside the 128-byte swizzled row
      const int panel = ks / 4;
      const int k_bytes = (ks % 4) * 32;
      const unsigned long long b = k_desc + ((panel * Cfg::KV_PANEL_BYTES + k_bytes) >> 4);
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
        const unsigned long long a =
            q_desc + ((panel * Cfg::Q_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
        kt_hopper::wgmma_m64k16_ss(s[mb], a, b, ks > 0 ? 1 : 0);
      }
    }
    kt_hopper::wgmma_commit();
  }

  // O += P V for the consumer's m-blocks; one commit group. v_desc: MN-major descriptor of the V
  // slot; key step t starts 16 rows (2048 bytes) further.
  static __device__ __forceinline__ void issue_output(Output& o, Probabilities& p,
                                                      unsigned long long v_desc) {
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
      kt_hopper::fence_operands(o[mb]);
      kt_hopper::fence_operands(p[mb]);
    }
    kt_hopper::wgmma_fence();
#pragma unroll
    for (int t = 0; t < Cfg::N_STEPS; ++t) {
      const unsigned long long b = v_desc + ((t * 16 * 128) >> 4);
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
        const unsigned(&a)[4] = *reinterpret_cast<const unsigned(*)[4]>(&p[mb][4 * t]);
        kt_hopper::wgmma_m64k16_rs_mn(o[mb], a, b, 1);
      }
    }
    kt_hopper::wgmma_commit();
  }

  static __device__ __forceinline__ void consume(const Smem& sm, int consumer, int m_start, int bh,
                                                 int n_blocks, int seq_len, float scale,
                                                 elem_t* __restrict__ O, float* __restrict__ lse) {
    const int thread = static_cast<int>(threadIdx.x) % 128;
    const int lane = thread % 32;
    // Tile row of this thread's row h = 0 in m-block 0 (accumulator layout: warp w holds rows
    // 16w..16w+15 of each m64 block, lane l rows l/4 and l/4 + 8).
    const int tile_row0 = consumer * Cfg::CONSUMER_ROWS + (thread / 32) * 16 + lane / 4;
    const float scale_log2 = scale * kLog2e;

    const unsigned long long q_desc =
        kt_hopper::wgmma_descriptor_sw128(sm.q + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long k_desc0 = kt_hopper::wgmma_descriptor_sw128(sm.k);
    const unsigned long long v_desc0 =
        kt_hopper::wgmma_descriptor_mn_sw128(sm.v, Cfg::KV_PANEL_BYTES);
    auto slot_desc = [](unsigned long long desc0, int stage) {
      return desc0 + ((stage * Cfg::KV_TILE_BYTES) >> 4);
    };

    Scores s;
    Probabilities p;
    Output o;
    RowStats stats[Cfg::M_BLOCKS];
    float correction[Cfg::M_BLOCKS][2];
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
      init_row_stats(stats[mb]);
#pragma unroll
      for (int i = 0; i < Cfg::O_ACC; ++i) o[mb][i] = 0.f;
#pragma unroll
      for (int i = 0; i < Cfg::S_ACC; ++i) s[mb][i] = 0.f;
    }

    // Masks, folds the scores of key block `block` into the statistics and turns them into
    // probabilities (still fp32, in s).
    auto softmax = [&](int block) {
      const int n_start = block * Cfg::BLOCK_N;
      const bool needs_mask =
          n_start + Cfg::BLOCK_N > seq_len || (Cfg::CAUSAL && n_start + Cfg::BLOCK_N - 1 > m_start);
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
        if (needs_mask) {
          mask_scores<Cfg::N8, Cfg::CAUSAL>(s[mb], m_start + tile_row0 + 64 * mb,
                                            n_start + 2 * (lane % 4), seq_len);
        }
        online_softmax<Cfg::N8>(s[mb], stats[mb], scale_log2, correction[mb]);
      }
    };
    auto to_probabilities = [&] {
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
        for (int i = 0; i < Cfg::P_REGS; ++i)
          p[mb][i] = kt_mma::pack_rn(s[mb][2 * i], s[mb][2 * i + 1]);
    };
    auto rescale_output = [&] {
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) scale_rows<Cfg::D8>(o[mb], correction[mb]);
    };
    auto fence_scores = [&] {
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) kt_hopper::fence_operands(s[mb]);
    };
    auto fence_output = [&] {
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) kt_hopper::fence_operands(o[mb]);
    };

    RingCursor<Cfg::STAGES> k, v;
    if (Cfg::PINGPONG && consumer == Cfg::CONSUMERS - 1)  // consumer 0 takes the first turn
      kt_hopper::named_barrier_arrive(Cfg::SCHEDULE_BARRIER, 256);
    kt_hopper::mbarrier_wait(sm.q_full, 0);

    // Key block 0: scores only.
    wait_turn(consumer);
    sm.k_ring.wait_full(k);
    issue_scores(s, q_desc, slot_desc(k_desc0, k.stage));
    pass_turn(consumer, false);
    kt_hopper::wgmma_wait<0>();
    fence_scores();
    release(sm.k_ring, k.stage);
    k.advance();
    softmax(0);
    to_probabilities();

    for (int block = 1; block < n_blocks; ++block) {
      wait_turn(consumer);
      sm.k_ring.wait_full(k);
      issue_scores(s, q_desc, slot_desc(k_desc0, k.stage));
      rescale_output();  // to the max of block - 1, which its probabilities are relative to
      sm.v_ring.wait_full(v);
      issue_output(o, p, slot_desc(v_desc0, v.stage));
      pass_turn(consumer, false);
      kt_hopper::wgmma_wait<1>();  // the scores; P V of the previous block may still run
      fence_scores();
      release(sm.k_ring, k.stage);
      k.advance();
      softmax(block);
      kt_hopper::wgmma_wait<0>();
      fence_output();
      // The new probabilities are computed from fenced scores, so they cannot be written before
      // the wait, while P V may still read the registers of the old ones.
      fence_scores();
      release(sm.v_ring, v.stage);
      v.advance();
      to_probabilities();
    }

    wait_turn(consumer);
    rescale_output();
    sm.v_ring.wait_full(v);
    issue_output(o, p, slot_desc(v_desc0, v.stage));
    pass_turn(consumer, true);
    kt_hopper::wgmma_wait<0>();
    fence_output();
    release(sm.v_ring, v.stage);

    store_output(sm, consumer, o, stats, tile_row0, m_start, bh, seq_len, O, lse, thread);
  }

  // Normalises the consumer's rows, writes their log-sum-exp, stages them as 16-bit values in its
  // own (no longer read) rows of the Q tile, same swizzled panel layout, and copies the rows
  // below seq_len out with 16-byte stores.
  static __device__ __forceinline__ void store_output(const Smem& sm, int consumer, const Output& o,
                                                      const RowStats (&stats)[Cfg::M_BLOCKS],
                                                      int tile_row0, int m_start, int bh,
                                                      int seq_len, elem_t* __restrict__ O,
                                                      float* __restrict__ lse, int thread) {
    const int lane = thread % 32;
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
      float inverse[2], row_lse[2];
      finish_rows(stats[mb], inverse, row_lse);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = tile_row0 + 64 * mb + 8 * h;
        const int query = m_start + row;
        if (lane % 4 == 0 && query < seq_len)
          lse[static_cast<long long>(bh) * seq_len + query] = row_lse[h];
#pragma unroll
        for (int j = 0; j < Cfg::D8; ++j) {
          const unsigned packed = kt_mma::pack_rn(o[mb][4 * j + 2 * h] * inverse[h],
                                                  o[mb][4 * j + 2 * h + 1] * inverse[h]);
          kt_mma::store_shared_4(staging_chunk(sm.q, row, j) + (lane % 4) * 4, packed);
        }
      }
    }
    kt_hopper::named_barrier_sync(Cfg::EPILOGUE_BARRIER + consumer, 128);
    constexpr int kChunks = Cfg::CONSUMER_ROWS * Cfg::D8;
    static_assert(kChunks % 128 == 0, "whole passes of the warpgroup's 128 threads");
    elem_t* out_head = O + static_cast<long long>(bh) * seq_len * Cfg::HEAD_DIM;
#pragma unroll
    for (int i = 0; i < kChunks / 128; ++i) {
      const int index = thread + 128 * i;
      const int row = consumer * Cfg::CONSUMER_ROWS + index / Cfg::D8;
      const int chunk = index % Cfg::D8;
      const int query = m_start + row;
      if (query >= seq_len) continue;
      unsigned w[4];
      kt_mma::load_shared_16(staging_chunk(sm.q, row, chunk), w);
      kt_mma::store_global_16(out_head + static_cast<long long>(query) * Cfg::HEAD_DIM + chunk * 8,
                              w[0], w[1], w[2], w[3]);
    }
  }

  // 16-byte chunk `chunk` (of HEAD_DIM/8) of tile row `row` in the 128B-swizzled panel layout.
  static __device__ __forceinline__ unsigned staging_chunk(unsigned tile, int row, int chunk) {
    return tile + (chunk / 8) * Cfg::Q_PANEL_BYTES + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
  }
};

}  // namespace kt_attn

#if defined(KT_HEAD_DIM) && defined(KT_IS_CAUSAL) && defined(KT_BLOCK_M) && defined(KT_BLOCK_N) && \
    defined(KT_STAGES) && defined(KT_CONSUMERS) && defined(KT_PINGPONG) && defined(KT_TILE_ORDER)
using KtAttentionWgmmaChosen =
    kt_attn::WgmmaAttentionConfig<KT_HEAD_DIM, KT_IS_CAUSAL, KT_BLOCK_M, KT_BLOCK_N, KT_STAGES,
                                  KT_CONSUMERS, KT_PINGPONG, KT_TILE_ORDER>;

// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtAttentionWgmmaChosen::THREADS, 1)
    kt_attention_wgmma(unsigned short* __restrict__ O, float* __restrict__ lse,
                       const __grid_constant__ KtTensorMap tma_q,
                       const __grid_constant__ KtTensorMap tma_k,
                       const __grid_constant__ KtTensorMap tma_v, int S, float scale) {
  kt_attn::WgmmaAttentionKernel<KtAttentionWgmmaChosen>::run(O, lse, &tma_q, &tma_k, &tma_v, S,
                                                             scale);
}
#endif
