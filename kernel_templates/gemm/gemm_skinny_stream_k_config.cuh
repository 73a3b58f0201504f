// Compile-time shape of one skinny_stream_k variant (gemm_skinny_stream_k.cuh) and every
// assumption the kernel makes about it, as static_asserts. Roles as in skinny_splitk: the weight
// rows (B, N of them) are the wgmma's m side, the tokens (A, M of them) its n side.
#pragma once

namespace kt_skinny_sk {

template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int SPLIT_K_, int L2_HINT_,
          int CLUSTER_>
struct SkinnyStreamKConfig {
  static constexpr int BM = BM_;  // tokens per tile: the wgmma n extent
  static constexpr int BN = BN_;  // weight rows per tile, split between the consumer warpgroups
  static constexpr int BK = BK_;  // k depth of one ring stage (one work unit)
  static constexpr int STAGES = STAGES_;
  static constexpr int CONSUMERS = CONSUMERS_;
  static constexpr int SPLIT_K = SPLIT_K_;         // most CTAs one output tile is shared by
  static constexpr bool L2_HINT = L2_HINT_ != 0;   // L2 policies on the copies
  static constexpr int CLUSTER = CLUSTER_;         // CTAs sharing (multicasting) each token tile
  static constexpr int T_BOX_ROWS = BM / CLUSTER;  // token rows one CTA loads per panel
  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int CONSUMER_ROWS = BN / CONSUMERS;  // weight rows of one consumer
  static constexpr int M_BLOCKS = CONSUMER_ROWS / 64;   // wgmma m64 blocks per consumer
  static constexpr int ACC = BM / 2;                    // fp32 accumulators per m64 block
  static constexpr int PANEL_K = 64;                    // elements of one 128-byte swizzled row
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int K_STEPS = BK / 16;
  static constexpr int W_PANEL_BYTES = BN * 128;
  static constexpr int T_PANEL_BYTES = BM * 128;
  static constexpr int W_STAGE_BYTES = PANELS * W_PANEL_BYTES;
  static constexpr int T_STAGE_BYTES = PANELS * T_PANEL_BYTES;
  static constexpr int STAGE_BYTES = W_STAGE_BYTES + T_STAGE_BYTES;
  static constexpr int W_OFFSET = 0;
  static constexpr int T_OFFSET = STAGES * W_STAGE_BYTES;
  static constexpr int BARRIER_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int FLAG_OFFSET = BARRIER_OFFSET + 2 * STAGES * 8;
  // +1024: the ring is aligned up to 1024 bytes inside the dynamic shared memory.
  static constexpr int SMEM_BYTES = FLAG_OFFSET + 16 + 1024;

  // Named barrier of all consumer threads (0 is __syncthreads).
  static constexpr unsigned CONSUMER_BARRIER = 1;
  // Registers after setmaxnreg: the producer only issues copies; consumers hold the accumulators.
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = CONSUMERS == 1 ? 240 : 232;
  // Outputs summed per thread with their loads in flight together (at most 16 float4 loads).
  static constexpr int REDUCE_ROUNDS =
      SPLIT_K >= 16 ? 1 : (SPLIT_K >= 8 ? 2 : (SPLIT_K >= 4 ? 4 : 8));

  static_assert(BM == 8 || BM == 16 || BM == 32 || BM == 64 || BM == 128,
                "BM is 8, 16, 32, 64 or 128: a wgmma n extent of hopper_wgmma_ops.cuh");
  static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
  static_assert(BN % (64 * CONSUMERS) == 0 && BN <= 256,
                "BN % (64*CONSUMERS) == 0 and BN <= 256: each consumer owns whole m64 blocks and "
                "the weight tile is one TMA box of at most 256 rows");
  static_assert(
      M_BLOCKS * ACC <= 64,
      "BN/(64*CONSUMERS) * BM/2 <= 64 accumulators per thread (128 spill in the epilogue)");
  static_assert(BK % 64 == 0 && BK <= 256,
                "BK % 64 == 0: a stage holds whole 64-element 128B-swizzled panels");
  static_assert(T_PANEL_BYTES % 1024 == 0 && W_PANEL_BYTES % 1024 == 0,
                "every panel starts on a 1024-byte boundary, as the 128B swizzle needs");
  static_assert(STAGES >= 2 && STAGES <= 16, "2 <= STAGES <= 16");
  static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "CLUSTER is 1, 2 or 4");
  static_assert(T_BOX_ROWS % 8 == 0,
                "BM/CLUSTER % 8 == 0: each CTA multicasts whole 8-row swizzle groups of tokens");
  static_assert(L2_HINT_ == 0 || L2_HINT_ == 1, "L2_HINT is 0 or 1");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 16, "1 <= SPLIT_K <= 16 partial tiles per output tile");
  static_assert(SMEM_BYTES <= 227 * 1024, "the ring fits a Hopper SM's 227 KiB");
};

}  // namespace kt_skinny_sk
