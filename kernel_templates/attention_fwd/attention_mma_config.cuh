// Compile-time shape of one FlashAttention-2 style variant (attention_mma.cuh): the tunables, the
// shared-memory layout they imply, and every assumption the kernel makes about them as
// static_asserts, so a variant that breaks one fails to compile with the reason in the log.
#pragma once

namespace kt_attn {

// Order in which the grid visits query blocks (matters for causal masks, where later query
// blocks see more keys): 0 query blocks of a head in order, heads one after the other in the
// second grid dimension; 1 the same with each head's heaviest (last) query block first; 2 the
// heaviest query blocks of all heads first (heads vary fastest).
enum TileOrder { kTileOrderNatural = 0, kTileOrderHeavyFirstPerHead = 1, kTileOrderHeavyFirst = 2 };

// (query block, head) of this CTA for a grid launched as the manifest's launch formulas say.
template <int kTileOrder>
__device__ __forceinline__ void tile_of_block(int& m_block, int& bh) {
  if constexpr (kTileOrder == kTileOrderHeavyFirst) {
    m_block = static_cast<int>(gridDim.y - 1 - blockIdx.y);
    bh = static_cast<int>(blockIdx.x);
  } else if constexpr (kTileOrder == kTileOrderHeavyFirstPerHead) {
    m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
    bh = static_cast<int>(blockIdx.y);
  } else {
    m_block = static_cast<int>(blockIdx.x);
    bh = static_cast<int>(blockIdx.y);
  }
}

template <int HEAD_DIM_, int CAUSAL_, int BLOCK_M_, int BLOCK_N_, int WARPS_, int STAGES_,
          int TILE_ORDER_>
struct MmaAttentionConfig {
  static constexpr int HEAD_DIM = HEAD_DIM_, BLOCK_M = BLOCK_M_, BLOCK_N = BLOCK_N_;
  static constexpr bool CAUSAL = CAUSAL_ != 0;
  static constexpr int WARPS = WARPS_, STAGES = STAGES_, TILE_ORDER = TILE_ORDER_;
  static constexpr int THREADS = WARPS * 32;
  static constexpr int WARP_ROWS = BLOCK_M / WARPS;    // query rows of one warp
  static constexpr int M_TILES = WARP_ROWS / 16;       // m16 tiles per warp
  static constexpr int N8 = BLOCK_N / 8;               // n8 score blocks per m16 tile
  static constexpr int D8 = HEAD_DIM / 8;              // n8 output blocks per m16 tile
  static constexpr int D_STEPS = HEAD_DIM / 16;        // k16 steps of Q Kᵀ
  static constexpr int N_STEPS = BLOCK_N / 16;         // k16 steps of P V
  static constexpr int CHUNKS_PER_ROW = HEAD_DIM / 8;  // 16-byte chunks of a tile row

  // Shared memory: the Q tile, then STAGES slots of (K tile, V tile), all [rows][HEAD_DIM]
  // with the 16-byte chunks of row r XOR-swizzled by r % 8.
  static constexpr int Q_BYTES = BLOCK_M * HEAD_DIM * 2;
  static constexpr int KV_TILE_BYTES = BLOCK_N * HEAD_DIM * 2;
  static constexpr int STAGE_BYTES = 2 * KV_TILE_BYTES;
  static constexpr int SMEM_BYTES = Q_BYTES + STAGES * STAGE_BYTES;

  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM is 64 or 128");
  static_assert(CAUSAL_ == 0 || CAUSAL_ == 1, "IS_CAUSAL is 0 or 1");
  static_assert(WARPS == 4 || WARPS == 8, "WARPS is 4 or 8");
  static_assert(BLOCK_M % (16 * WARPS) == 0,
                "BLOCK_M % (16*WARPS) == 0: each warp owns whole m16 tiles of query rows");
  static_assert(M_TILES <= 2, "BLOCK_M/WARPS <= 32: at most two m16 tiles per warp");
  static_assert(BLOCK_N % 16 == 0 && BLOCK_N >= 16 && BLOCK_N <= 128,
                "BLOCK_N is a multiple of 16 in 16..128: whole k16 steps of P V");
  static_assert((BLOCK_N * CHUNKS_PER_ROW) % THREADS == 0 &&
                    (BLOCK_M * CHUNKS_PER_ROW) % THREADS == 0,
                "every thread copies the same number of 16-byte chunks of each tile");
  static_assert(THREADS % CHUNKS_PER_ROW == 0 && (THREADS / CHUNKS_PER_ROW) % 8 == 0,
                "a thread's chunks of a tile share one column and one swizzle pattern");
  static_assert(STAGES >= 2 && STAGES <= 4, "2 <= STAGES <= 4 (K/V ring slots)");
  static_assert(M_TILES * (HEAD_DIM / 2 + BLOCK_N / 2) <= 192,
                "fp32 output + score accumulators of a thread fit the register file");
  static_assert(TILE_ORDER >= 0 && TILE_ORDER <= 2, "TILE_ORDER is 0, 1 or 2");
};

}  // namespace kt_attn
