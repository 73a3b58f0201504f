// Compile-time shape of one FlashAttention-3 style Hopper variant (attention_wgmma.cuh): the
// tunables, the shared-memory layout they imply, and every assumption the kernel makes about
// them as static_asserts, so a variant that breaks one fails to compile with the reason in the log.
#pragma once

#include "attention_mma_config.cuh"  // TileOrder, tile_of_block

namespace kt_attn {

template <int HEAD_DIM_, int CAUSAL_, int BLOCK_M_, int BLOCK_N_, int STAGES_, int CONSUMERS_,
          int PINGPONG_, int TILE_ORDER_>
struct WgmmaAttentionConfig {
  static constexpr int HEAD_DIM = HEAD_DIM_, BLOCK_M = BLOCK_M_, BLOCK_N = BLOCK_N_;
  static constexpr bool CAUSAL = CAUSAL_ != 0;
  static constexpr int STAGES = STAGES_, CONSUMERS = CONSUMERS_, TILE_ORDER = TILE_ORDER_;
  static constexpr bool PINGPONG = PINGPONG_ != 0;
  static constexpr int THREADS = (CONSUMERS + 1) * 128;  // warpgroup 0 produces
  static constexpr int CONSUMER_ROWS = BLOCK_M / CONSUMERS;
  static constexpr int M_BLOCKS = CONSUMER_ROWS / 64;  // wgmma m64 row blocks per consumer
  static constexpr int S_ACC = BLOCK_N / 2;            // fp32 scores per thread per m64 block
  static constexpr int P_REGS = BLOCK_N / 4;           // packed 16-bit probabilities
  static constexpr int O_ACC = HEAD_DIM / 2;           // fp32 outputs per thread per m64 block
  static constexpr int N8 = BLOCK_N / 8, D8 = HEAD_DIM / 8;
  static constexpr int D_STEPS = HEAD_DIM / 16;  // k16 steps of Q Kᵀ
  static constexpr int N_STEPS = BLOCK_N / 16;   // k16 steps of P V

  // Tiles are stored as HEAD_DIM/64 panels of [rows][64] elements, one 128-byte row each with
  // the 128B swizzle a TMA box {64, rows, 1} writes: K-major for Q and K (wgmma A and B of
  // Q Kᵀ), MN-major for V (B of P V, read transposed).
  static constexpr int PANELS = HEAD_DIM / 64;
  static constexpr int Q_PANEL_BYTES = BLOCK_M * 128;
  static constexpr int KV_PANEL_BYTES = BLOCK_N * 128;
  static constexpr int Q_BYTES = PANELS * Q_PANEL_BYTES;
  static constexpr int KV_TILE_BYTES = PANELS * KV_PANEL_BYTES;  // TMA bytes of one K or V tile

  // Layout after aligning the dynamic shared memory to 1024 bytes: Q, the K ring, the V ring,
  // then the mbarriers (Q full; K full, K empty, V full, V empty per stage). The manifest asks
  // for SMEM_BYTES + 1024 (alignment slack).
  static constexpr int K_OFFSET = Q_BYTES;
  static constexpr int V_OFFSET = K_OFFSET + STAGES * KV_TILE_BYTES;
  static constexpr int BARRIER_OFFSET = V_OFFSET + STAGES * KV_TILE_BYTES;
  static constexpr int SMEM_BYTES = BARRIER_OFFSET + 256;

  // Registers after setmaxnreg: one producer thread issues copies, consumers hold the tiles
  // (with three consumers, 160 each is what the register file leaves them).
  static constexpr int PRODUCER_REGISTERS = 24;
  static constexpr int CONSUMER_REGISTERS = CONSUMERS == 3 ? 160 : 240;
  // Named barriers: 0 is __syncthreads; consumer c waits on 1 + c for its turn to issue GEMMs
  // (ping-pong, round robin) and uses 4 + c to hand its output rows around before the store.
  static constexpr int SCHEDULE_BARRIER = 1;
  static constexpr int EPILOGUE_BARRIER = 4;

  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128,
                "HEAD_DIM is 64 or 128: whole 64-element panels and a wgmma n-extent of P V");
  static_assert(CAUSAL_ == 0 || CAUSAL_ == 1, "IS_CAUSAL is 0 or 1");
  static_assert(CONSUMERS >= 1 && CONSUMERS <= 3, "1 to 3 consumer warpgroups");
  static_assert(BLOCK_M % (64 * CONSUMERS) == 0 && (M_BLOCKS == 1 || M_BLOCKS == 2),
                "BLOCK_M is 64 or 128 rows per consumer warpgroup (one or two wgmma m64 blocks)");
  static_assert(BLOCK_M <= 256, "BLOCK_M <= 256: one TMA box of Q rows");
  static_assert(BLOCK_N == 64 || BLOCK_N == 128 || BLOCK_N == 176 || BLOCK_N == 192,
                "BLOCK_N is 64, 128, 176 or 192: a wgmma n-extent of Q Kᵀ (hopper_wgmma_ops.cuh) "
                "and whole k16 steps of P V");
  static_assert(BLOCK_N * 128 % 1024 == 0, "K and V panels keep the 1024-byte swizzle alignment");
  static_assert(M_BLOCKS * (S_ACC + P_REGS + O_ACC) <= CONSUMER_REGISTERS - 32,
                "scores, probabilities and outputs of a consumer thread fit its registers");
  static_assert(STAGES >= 2 && STAGES <= 4, "2 <= STAGES <= 4 (K and V ring slots)");
  static_assert(!PINGPONG || CONSUMERS >= 2, "ping-pong needs two or more consumer warpgroups");
  static_assert(TILE_ORDER >= 0 && TILE_ORDER <= 2, "TILE_ORDER is 0, 1 or 2");
  static_assert(PRODUCER_REGISTERS * 128 + CONSUMERS * CONSUMER_REGISTERS * 128 <= 65536,
                "setmaxnreg budgets fit the register file");
};

}  // namespace kt_attn
