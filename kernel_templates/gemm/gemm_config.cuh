// Compile-time shape of one GEMM variant: the tunables and every assumption the kernel makes about
// them, as static_asserts (a variant that breaks one fails to compile with the reason in the log).
#pragma once

namespace kt_gemm {

enum KOrder { kForward = 0, kReverse = 1, kInterleaved = 2 };

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int K_ORDER_,
          int SPLIT_K_>
struct GemmConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int STAGES = STAGES_, K_ORDER = K_ORDER_, SPLIT_K = SPLIT_K_;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int WM = BM / WARPS_M;  // warp tile
  static constexpr int WN = BN / WARPS_N;
  static constexpr int MMA_M = WM / 16;  // m16n8k16 tiles per warp
  static constexpr int MMA_N = WN / 8;
  static constexpr int K_STEPS = BK / 16;        // k16 steps per k-tile
  static constexpr int CHUNKS_PER_ROW = BK / 8;  // 16-byte chunks in one K-row of a tile
  static constexpr int COPY_ROWS_PER_PASS =
      THREADS / CHUNKS_PER_ROW;  // rows one cp.async pass fills
  static constexpr int A_TILE_BYTES = BM * BK * 2;
  static constexpr int STAGE_BYTES = (BM + BN) * BK * 2;

  static_assert(BK % 16 == 0, "BK % 16 == 0: mma.sync m16n8k16 consumes K in steps of 16");
  static_assert(BK >= 32,
                "BK >= 32: fragments of the next k-tile are fetched during the last k16 step");
  static_assert(K_STEPS % 2 == 0, "BK % 32 == 0: fragment buffers alternate by k16-step parity");
  static_assert((CHUNKS_PER_ROW & (CHUNKS_PER_ROW - 1)) == 0,
                "BK is a power of two: the XOR swizzle permutes the 16-byte chunks of a row");
  static_assert(BM % (WARPS_M * 16) == 0, "BM % (WARPS_M*16) == 0: warp rows are whole m16 tiles");
  static_assert(BN % (WARPS_N * 16) == 0,
                "BN % (WARPS_N*16) == 0: warp cols are whole pairs of n8 tiles (ldmatrix.x4)");
  static_assert(THREADS <= 1024, "WARPS_M*WARPS_N*32 <= 1024 threads");
  static_assert((BM * CHUNKS_PER_ROW) % THREADS == 0,
                "BM*BK/8 % threads == 0: every thread copies the same number of A chunks");
  static_assert((BN * CHUNKS_PER_ROW) % THREADS == 0,
                "BN*BK/8 % threads == 0: every thread copies the same number of B chunks");
  static_assert(COPY_ROWS_PER_PASS % 8 == 0,
                "threads / (BK/8) % 8 == 0: the rows a thread copies share one swizzle pattern");
  static_assert(STAGES >= 2 && STAGES <= 8, "2 <= STAGES <= 8");
  static_assert(K_ORDER >= 0 && K_ORDER <= 2,
                "K_ORDER is 0 (forward), 1 (reverse) or 2 (interleaved)");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 64, "1 <= SPLIT_K <= 64");
};

}  // namespace kt_gemm
