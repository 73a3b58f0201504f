// Attention forward, FlashAttention-2 style, for sm_80 and newer: O = softmax(Q Kᵀ * scale
// [causal mask]) V and the row log-sum-exp, Q, K, V, O [B, H, S, HEAD_DIM] row-major 16-bit, fp32
// softmax and accumulation.
//
// A CTA owns BLOCK_M query rows of one head; each of its WARPS warps owns BLOCK_M/WARPS of them,
// so a row's softmax statistics never leave its warp. The Q tile is loaded once; K and V tiles of
// BLOCK_N keys stream through a STAGES-deep cp.async ring (K and V in separate commit groups, so
// the scores can start before V has landed). Per key block: S = Q Kᵀ with mma.sync m16n8k16 from
// ldmatrix fragments, masking only on blocks that cross the causal diagonal or the end of the
// sequence, online softmax in registers (base 2), P rounded to 16 bits in registers and used as the
// A operand of O += P V (V fragments through ldmatrix.trans). Causal CTAs stop at the diagonal.
// The output is normalised at the end and leaves through the warp's own rows of the Q tile.
//
// Launch: grid and block as the manifest's launch formulas (TILE_ORDER decides which grid
// dimension walks the query blocks), THREADS = WARPS*32, Cfg::SMEM_BYTES of dynamic shared memory.

#include "attention_mma_config.cuh"
#include "attention_mma_io.cuh"
#include "attention_softmax.cuh"
#include "mma_primitives.cuh"

namespace kt_attn {

template <class Cfg>
struct MmaAttentionKernel {
  using ScoreTile = float[Cfg::M_TILES][Cfg::N8 * 4];
  using OutputTile = float[Cfg::M_TILES][Cfg::HEAD_DIM / 2];

  static __device__ __forceinline__ void run(elem_t* __restrict__ O, float* __restrict__ lse,
                                             const elem_t* __restrict__ Q,
                                             const elem_t* __restrict__ K,
                                             const elem_t* __restrict__ V, int seq_len,
                                             float scale) {
    int m_block, bh;
    tile_of_block<Cfg::TILE_ORDER>(m_block, bh);
    const int m_start = m_block * Cfg::BLOCK_M;
    const long long head_offset = static_cast<long long>(bh) * seq_len * Cfg::HEAD_DIM;
    const int key_end = Cfg::CAUSAL ? min(seq_len, m_start + Cfg::BLOCK_M) : seq_len;
    const int n_blocks = (key_end + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N;

    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned q_tile = kt_mma::smem_address(smem);
    const unsigned ring = q_tile + Cfg::Q_BYTES;
    auto k_tile = [&](int block) { return ring + (block % Cfg::STAGES) * Cfg::STAGE_BYTES; };

    // Commit groups in order: Q, then K and V of every key block; past the last block empty
    // groups keep the count regular (group 1 + 2j is K of block j).
    load_rows<Cfg, Cfg::BLOCK_M>(q_tile, Q + head_offset, m_start, seq_len);
    kt_mma::cp_async_commit();
    auto load_block = [&](int block) {
      if (block < n_blocks) {
        load_rows<Cfg, Cfg::BLOCK_N>(k_tile(block), K + head_offset, block * Cfg::BLOCK_N, seq_len);
      }
      kt_mma::cp_async_commit();
      if (block < n_blocks) {
        load_rows<Cfg, Cfg::BLOCK_N>(k_tile(block) + Cfg::KV_TILE_BYTES, V + head_offset,
                                     block * Cfg::BLOCK_N, seq_len);
      }
      kt_mma::cp_async_commit();
    };
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) load_block(s);

    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp_row = (static_cast<int>(threadIdx.x) / 32) * Cfg::WARP_ROWS;
    const float scale_log2 = scale * kLog2e;

    OutputTile o;
    RowStats stats[Cfg::M_TILES];
#pragma unroll
    for (int mt = 0; mt < Cfg::M_TILES; ++mt) {
      init_row_stats(stats[mt]);
#pragma unroll
      for (int i = 0; i < Cfg::HEAD_DIM / 2; ++i) o[mt][i] = 0.f;
    }

    for (int block = 0; block < n_blocks; ++block) {
      // K of this block has landed (V may still be in flight), and every warp is done with the
      // previous block, whose ring slot the next copies refill.
      kt_mma::cp_async_wait<2 * Cfg::STAGES - 3>();
      __syncthreads();
      load_block(block + Cfg::STAGES - 1);

      ScoreTile s;
      compute_scores(s, q_tile, k_tile(block), warp_row, lane);

      const int n_start = block * Cfg::BLOCK_N;
      const bool needs_mask =
          n_start + Cfg::BLOCK_N > seq_len || (Cfg::CAUSAL && n_start + Cfg::BLOCK_N - 1 > m_start);
#pragma unroll
      for (int mt = 0; mt < Cfg::M_TILES; ++mt) {
        if (needs_mask) {
          mask_scores<Cfg::N8, Cfg::CAUSAL>(s[mt], m_start + warp_row + 16 * mt + lane / 4,
                                            n_start + 2 * (lane % 4), seq_len);
        }
        float correction[2];
        online_softmax<Cfg::N8>(s[mt], stats[mt], scale_log2, correction);
        scale_rows<Cfg::D8>(o[mt], correction);
      }

      kt_mma::cp_async_wait<2 * Cfg::STAGES - 2>();
      __syncthreads();
      accumulate_output(o, s, k_tile(block) + Cfg::KV_TILE_BYTES, lane);
    }
    kt_mma::cp_async_wait<0>();

    float inverse[Cfg::M_TILES][2];
#pragma unroll
    for (int mt = 0; mt < Cfg::M_TILES; ++mt) {
      float row_lse[2];
      finish_rows(stats[mt], inverse[mt], row_lse);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m_start + warp_row + 16 * mt + lane / 4 + 8 * h;
        if (lane % 4 == 0 && row < seq_len)
          lse[static_cast<long long>(bh) * seq_len + row] = row_lse[h];
      }
    }
    // The warp's Q rows are its own and no longer read: they stage the output.
    store_warp_rows<Cfg::HEAD_DIM, Cfg::M_TILES>(o, inverse, q_tile, warp_row, O + head_offset,
                                                 m_start + warp_row, seq_len, lane);
  }

  // s = Q Kᵀ for the warp's rows and the block's BLOCK_N keys.
  static __device__ __forceinline__ void compute_scores(ScoreTile& s, unsigned q_tile,
                                                        unsigned k_tile, int warp_row, int lane) {
#pragma unroll
    for (int mt = 0; mt < Cfg::M_TILES; ++mt)
#pragma unroll
      for (int i = 0; i < Cfg::N8 * 4; ++i) s[mt][i] = 0.f;
#pragma unroll
    for (int ks = 0; ks < Cfg::D_STEPS; ++ks) {
      unsigned a[Cfg::M_TILES][4];
#pragma unroll
      for (int mt = 0; mt < Cfg::M_TILES; ++mt)
        load_a_fragment<Cfg::HEAD_DIM>(a[mt], q_tile, warp_row + 16 * mt, ks, lane);
#pragma unroll
      for (int np = 0; np < Cfg::N8 / 2; ++np) {
        unsigned b[4];
        load_k_fragments<Cfg::HEAD_DIM>(b, k_tile, 16 * np, ks, lane);
#pragma unroll
        for (int mt = 0; mt < Cfg::M_TILES; ++mt) {
          kt_mma::mma_16816(block4(s[mt], 2 * np), a[mt], {b[0], b[1]});
          kt_mma::mma_16816(block4(s[mt], 2 * np + 1), a[mt], {b[2], b[3]});
        }
      }
    }
  }

  // o += P V, P = the probabilities in s rounded to 16 bits, k16 step by k16 step.
  static __device__ __forceinline__ void accumulate_output(OutputTile& o, const ScoreTile& p,
                                                           unsigned v_tile, int lane) {
#pragma unroll
    for (int t = 0; t < Cfg::N_STEPS; ++t) {
      unsigned a[Cfg::M_TILES][4];
#pragma unroll
      for (int mt = 0; mt < Cfg::M_TILES; ++mt) probability_fragment<Cfg::N8>(p[mt], t, a[mt]);
#pragma unroll
      for (int dp = 0; dp < Cfg::D8 / 2; ++dp) {
        unsigned b[4];
        load_v_fragments<Cfg::HEAD_DIM>(b, v_tile, t, dp, lane);
#pragma unroll
        for (int mt = 0; mt < Cfg::M_TILES; ++mt) {
          kt_mma::mma_16816(block4(o[mt], 2 * dp), a[mt], {b[0], b[1]});
          kt_mma::mma_16816(block4(o[mt], 2 * dp + 1), a[mt], {b[2], b[3]});
        }
      }
    }
  }

  // The 4 accumulators of n8 block j inside a row of blocks.
  template <int N>
  static __device__ __forceinline__ float (&block4(float (&acc)[N], int j))[4] {
    return *reinterpret_cast<float(*)[4]>(&acc[4 * j]);
  }
};

}  // namespace kt_attn

#if defined(KT_HEAD_DIM) && defined(KT_IS_CAUSAL) && defined(KT_BLOCK_M) && defined(KT_BLOCK_N) && \
    defined(KT_WARPS) && defined(KT_STAGES) && defined(KT_TILE_ORDER)
using KtAttentionMmaChosen =
    kt_attn::MmaAttentionConfig<KT_HEAD_DIM, KT_IS_CAUSAL, KT_BLOCK_M, KT_BLOCK_N, KT_WARPS,
                                KT_STAGES, KT_TILE_ORDER>;

// Entry point; parameters in the order of the family's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtAttentionMmaChosen::THREADS, 1)
    kt_attention_mma(unsigned short* __restrict__ O, float* __restrict__ lse,
                     const unsigned short* __restrict__ Q, const unsigned short* __restrict__ K,
                     const unsigned short* __restrict__ V, int S, float scale) {
  kt_attn::MmaAttentionKernel<KtAttentionMmaChosen>::run(O, lse, Q, K, V, S, scale);
}
#endif
