// Compile-time shape of one wgmma GEMM variant fed by cp.async or plain loads instead of TMA
// (gemm_cp_async.cuh): the tunables, the shared-memory layout they imply, and every assumption
// the kernel makes about them as static_asserts.
//
// C is tiled BM x BN. The wgmma "m side" (64-row blocks, split among the warpgroups) is A's rows
// (SWAP = 0) or B's rows (SWAP = 1, i.e. C^T = B * A^T is computed); the other operand's rows are
// the wgmma n extent. So a small N (SWAP 0) or a small M (SWAP 1) becomes a narrow n of 16..96
// instead of a mostly empty 64-row block.
#pragma once

namespace kt_cp_async {

template <int BM_, int BN_, int STAGES_, int WARPGROUPS_, int SPLIT_K_, int SWAP_, int VEC_>
struct CpAsyncConfig {
  static constexpr int BM = BM_, BN = BN_;  // C tile
  static constexpr int BK = 64;             // one 128-byte swizzled row per tile row and stage
  static constexpr int STAGES = STAGES_, WARPGROUPS = WARPGROUPS_, SPLIT_K = SPLIT_K_;
  static constexpr bool SWAP = SWAP_ != 0;
  static constexpr int VEC = VEC_;  // bytes per global load: 16, 8, 4 (cp.async) or 2

  static constexpr int M_SIDE = SWAP ? BN : BM;  // rows of the m-side operand per CTA
  static constexpr int N_SIDE = SWAP ? BM : BN;  // wgmma n
  static constexpr int THREADS = WARPGROUPS * 128;
  static constexpr int WG_ROWS = M_SIDE / WARPGROUPS;
  static constexpr int M_BLOCKS = WG_ROWS / 64;
  static constexpr int ACC_PER_BLOCK = N_SIDE / 2;
  static constexpr int ACC = M_BLOCKS * ACC_PER_BLOCK;

  // A stage is the m-side tile then the n-side tile, [rows][64] elements each, 128B-swizzled
  // (16-byte chunk c of row r at chunk c ^ (r % 8)): what a wgmma K-major descriptor reads.
  static constexpr int TILE_ROWS = M_SIDE + N_SIDE;
  static constexpr int N_SIDE_OFFSET = M_SIDE * 128;
  static constexpr int STAGE_BYTES = TILE_ROWS * 128;
  static constexpr int RING_BYTES = STAGES * STAGE_BYTES;
  // Loads: thread t copies 16-byte chunk t % 8 of rows t / 8 + j * ROWS_PER_PASS.
  static constexpr int ROWS_PER_PASS = THREADS / 8;
  static constexpr int PASSES = (TILE_ROWS + ROWS_PER_PASS - 1) / ROWS_PER_PASS;

  // After the main loop the ring holds the fp32 C tile, [BM][PARTIAL_LD], padded so that a warp's
  // accumulator stores hit distinct banks (8-byte pairs along a row without SWAP, single values
  // down a column with it).
  static constexpr int PARTIAL_LD = (BN + 31) / 32 * 32 + (SWAP ? 4 : 8);
  static constexpr int PARTIAL_BYTES = BM * PARTIAL_LD * 4;
  static constexpr int SMEM_BYTES = RING_BYTES > PARTIAL_BYTES ? RING_BYTES : PARTIAL_BYTES;
  // Registers a thread needs, roughly: accumulators, the staged words of VEC 2 (8 per pass),
  // addressing. Two CTAs per SM when their shared memory fits and the register cap leaves room.
  static constexpr int REGISTERS_ESTIMATE = ACC + (VEC == 2 ? 8 * PASSES : 0) + 48;
  static constexpr int MIN_BLOCKS =
      (2 * (SMEM_BYTES + 1024) <= 227 * 1024 && 2 * THREADS * REGISTERS_ESTIMATE <= 65536) ? 2 : 1;

  static_assert(M_SIDE % 64 == 0 && M_SIDE <= 256,
                "the m side (SWAP ? BN : BM) is 64, 128, 192 or 256 rows: whole wgmma m64 blocks");
  static_assert(WARPGROUPS == 1 || WARPGROUPS == 2, "1 or 2 warpgroups");
  static_assert(WG_ROWS % 64 == 0,
                "(SWAP ? BN : BM) % (64*WARPGROUPS) == 0: each warpgroup owns whole m64 blocks");
  static_assert(N_SIDE == 8 || N_SIDE == 16 || N_SIDE == 24 || N_SIDE == 32 || N_SIDE == 48 ||
                    N_SIDE == 64 || N_SIDE == 96 || N_SIDE == 128 || N_SIDE == 256,
                "the n side (SWAP ? BM : BN) is a wgmma n of hopper_wgmma_ops.cuh");
  static_assert(ACC <= 128, "<= 128 fp32 accumulators per thread");
  static_assert(REGISTERS_ESTIMATE <= 255,
                "accumulators + 8*PASSES staged words (VEC 2) + 48 <= 255 registers per thread");
  static_assert(STAGES >= 3 && STAGES <= 12,
                "3 <= STAGES <= 12: k-tile i+STAGES-2 is fetched while wgmma i-1 may still read");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 8,
                "1 <= SPLIT_K <= 8: the K slices of a tile form one portable cluster");
  static_assert(VEC == 2 || VEC == 4 || VEC == 8 || VEC == 16, "VEC is 2, 4, 8 or 16 bytes");
  static_assert(ROWS_PER_PASS % 8 == 0 && M_SIDE % ROWS_PER_PASS == 0,
                "a copy pass covers whole 8-row swizzle groups of one operand");
  static_assert(BN % 4 == 0, "BN % 4 == 0: the epilogue moves 4 columns of C at a time");
};

}  // namespace kt_cp_async
