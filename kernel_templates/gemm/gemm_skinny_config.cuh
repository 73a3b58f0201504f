// Compile-time shape of one skinny (decode-shape) GEMM variant and every assumption the kernel
// makes about it, as static_asserts. Roles are swapped against gemm_config.cuh: the weight rows
// (B, N of them) are the mma's 16-row side and the tokens (A, M of them) its 8-column side, so a
// handful of tokens wastes at most one n8 tile instead of a whole m16 tile.
#pragma once

namespace kt_skinny {

enum MmaKind { kMmaSync = 0, kWgmma = 1 };

template <int BM_, int BN_, int BK_, int WARPS_N_, int WARPS_M_, int WARPS_K_, int STAGES_,
          int SPLIT_K_, int MMA_ = kMmaSync>
struct SkinnyConfig {
  static constexpr int BM = BM_;  // tokens per block (rows of A and C)
  static constexpr int BN = BN_;  // weight rows per block (rows of B, columns of C)
  static constexpr int BK = BK_;  // k-depth of one ring stage
  static constexpr int WARPS_N = WARPS_N_, WARPS_M = WARPS_M_, WARPS_K = WARPS_K_;
  static constexpr int STAGES = STAGES_, SPLIT_K = SPLIT_K_;
  static constexpr int MMA = MMA_;  // kMmaSync: per-warp m16n8k16; kWgmma: m64nWMk16 per warpgroup
  static constexpr int THREADS = WARPS_N * WARPS_M * WARPS_K * 32;
  static constexpr int WN = BN / WARPS_N;  // weight rows of one warp
  static constexpr int WM = BM / WARPS_M;  // tokens of one warp
  static constexpr int MMA_W = WN / 16;    // m16 tiles (weight rows) per warp
  static constexpr int MMA_T = WM / 8;     // n8 tiles (tokens) per warp
  static constexpr int K_STEPS = BK / 16;  // k16 steps per stage, dealt round-robin to WARPS_K
  static constexpr int STEPS_PER_WARP = K_STEPS / WARPS_K;
  static constexpr int CHUNKS_PER_ROW = BK / 8;  // 16-byte chunks in one K-row of a tile
  static constexpr int ROWS_PER_PASS = THREADS / CHUNKS_PER_ROW;  // rows one cp.async pass fills
  static constexpr int TOKEN_TILE_BYTES = BM * BK * 2;
  static constexpr int WEIGHT_TILE_BYTES = BN * BK * 2;
  static constexpr int STAGE_BYTES = TOKEN_TILE_BYTES + WEIGHT_TILE_BYTES;
  static constexpr int RING_BYTES = STAGES * STAGE_BYTES;
  // fp32 partial tiles, one per k-warp group (folded into the first before the cluster sums the
  // slices), [token][weight row] with 4 floats of padding so that the accumulator stores of a
  // warp hit 32 distinct banks.
  static constexpr int PARTIAL_LD = BN + 4;
  static constexpr int PARTIAL_BYTES = WARPS_K * BM * PARTIAL_LD * 4;
  static constexpr int SMEM_BYTES = RING_BYTES > PARTIAL_BYTES ? RING_BYTES : PARTIAL_BYTES;
  // Two blocks per SM when both fit, so the register cap leaves room for the second one.
  static constexpr int MIN_BLOCKS = (THREADS <= 256 && 2 * SMEM_BYTES <= 220 * 1024) ? 2 : 1;

  static_assert(BK % 16 == 0, "BK % 16 == 0: mma.sync m16n8k16 consumes K in steps of 16");
  static_assert(CHUNKS_PER_ROW >= 8 && (CHUNKS_PER_ROW & (CHUNKS_PER_ROW - 1)) == 0,
                "BK is 64 or 128: the swizzle XORs the low 3 bits of the 16-byte chunk index");
  static_assert(BN % (WARPS_N * 16) == 0, "BN % (WARPS_N*16) == 0: warps own whole m16 tiles");
  static_assert(BM % (WARPS_M * 16) == 0,
                "BM % (WARPS_M*16) == 0: warps own whole pairs of n8 token tiles (ldmatrix.x4)");
  static_assert(K_STEPS % WARPS_K == 0, "(BK/16) % WARPS_K == 0: every k-warp gets equal steps");
  static_assert(THREADS >= 128 && THREADS <= 1024, "4..32 warps");
  static_assert(THREADS % CHUNKS_PER_ROW == 0 && ROWS_PER_PASS % 8 == 0,
                "threads / (BK/8) % 8 == 0: the rows a thread copies share one swizzle pattern");
  static_assert(BN % 4 == 0, "BN % 4 == 0: the reduction moves 4 weight rows at a time");
  static_assert(STAGES >= 2 && STAGES <= 12, "2 <= STAGES <= 12");
  static_assert(MMA == kMmaSync || MMA == kWgmma, "MMA is 0 (mma.sync) or 1 (wgmma)");
  static_assert(MMA == kMmaSync || BK == 64,
                "wgmma: BK == 64, so a tile row is one 128-byte swizzle atom row");
  static_assert(MMA == kMmaSync || (WN == 16 && WARPS_N % 4 == 0),
                "wgmma: BN == 16*WARPS_N, the 4 warps of a warpgroup own 64 consecutive rows");
  static_assert(MMA == kMmaSync || WM == 16 || WM == 32 || WM == 64 || WM == 128,
                "wgmma: tokens per warpgroup (BM/WARPS_M) is 16, 32, 64 or 128");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 16,
                "1 <= SPLIT_K <= 16: the K slices of a tile form one thread-block cluster");
};

}  // namespace kt_skinny
