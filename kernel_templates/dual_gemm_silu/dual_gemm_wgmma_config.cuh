// Compile-time shape of one warp-specialised wgmma dual-GEMM variant (dual_gemm_wgmma.cuh): the
// tunables, the shared-memory layout they imply, and every assumption the kernel makes about them
// as static_asserts, so a variant that breaks one fails to compile with the reason in the log.
#pragma once

#include "grouped_tile_scheduler.cuh"

namespace kt_dual {

enum KOrder { kForward = 0, kReverse = 1 };

template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_M_, int CLUSTER_N_,
          int RASTER_, int BAND_, int GROUP_ORDER_, int K_ORDER_, int SPLIT_K_>
struct DualWgmmaConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_;
  static constexpr int CONSUMERS = CONSUMERS_;  // consumer warpgroups; one producer besides
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_;
  static constexpr int CLUSTER_SIZE = CLUSTER_M * CLUSTER_N;
  static constexpr int RASTER = RASTER_, BAND = BAND_, GROUP_ORDER = GROUP_ORDER_;
  static constexpr int K_ORDER = K_ORDER_, SPLIT_K = SPLIT_K_;

  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int CONSUMER_ROWS = BM / CONSUMERS;  // tile rows of one consumer warpgroup
  static constexpr int M_BLOCKS = CONSUMER_ROWS / 64;   // wgmma m64 blocks per consumer
  static constexpr int ACC_PER_BLOCK = BN / 2;          // fp32 per thread per m64 block, per GEMM
  static constexpr int ACC_PER_THREAD = 2 * M_BLOCKS * ACC_PER_BLOCK;  // both accumulators
  static constexpr int K_STEPS = BK / 16;                              // wgmma k16 steps per stage

  // Tiles are stored as BK/64 "panels" of [rows][64] elements: one 128-byte swizzled row each,
  // the layout a TMA box {64, rows, 1} with 128B swizzle writes and a 128B-swizzle descriptor
  // reads. A stage holds the A tile once and the B1 and B2 tiles it feeds.
  static constexpr int PANEL_K = 64;
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int A_PANEL_BYTES = BM * PANEL_K * 2;
  static constexpr int B_PANEL_BYTES = BN * PANEL_K * 2;
  static constexpr int A_STAGE_BYTES = BM * BK * 2;
  static constexpr int B_STAGE_BYTES = BN * BK * 2;                      // of B1, and again of B2
  static constexpr int STAGE_BYTES = A_STAGE_BYTES + 2 * B_STAGE_BYTES;  // TMA bytes per stage

  // Multicast: the CLUSTER_N CTAs of a cluster row share the A tile, each loading
  // BM/CLUSTER_N rows of it for all; the CLUSTER_M CTAs of a column share B1 and B2 likewise.
  static constexpr int A_BOX_ROWS = BM / CLUSTER_N;
  static constexpr int B_BOX_ROWS = BN / CLUSTER_M;

  // Dynamic shared memory after aligning its base to 1024 bytes: A stages, B1 stages, B2 stages,
  // the full and empty mbarriers, then one word per consumer for the split-K "last slice" flag.
  // The manifest asks for STAGES*STAGE_BYTES + 2048 (alignment slack + this tail).
  static constexpr int A_OFFSET = 0;
  static constexpr int B1_OFFSET = STAGES * A_STAGE_BYTES;
  static constexpr int B2_OFFSET = B1_OFFSET + STAGES * B_STAGE_BYTES;
  static constexpr int BARRIER_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int FLAG_OFFSET = BARRIER_OFFSET + 2 * STAGES * 8;
  static constexpr int SMEM_BYTES = FLAG_OFFSET + 4 * CONSUMERS;

  // Registers after setmaxnreg: the producer only issues copies; consumers hold the accumulators.
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = CONSUMERS == 1 ? 240 : 232;

  using Scheduler = kt_sched::GroupedTileScheduler<BM, BN, CLUSTER_M, CLUSTER_N, RASTER, BAND,
                                                   SPLIT_K, GROUP_ORDER>;

  static_assert(BK % 64 == 0, "BK % 64 == 0: a stage holds whole 64-element 128B-swizzled panels");
  static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
  static_assert(BM % (64 * CONSUMERS) == 0,
                "BM % (64*CONSUMERS) == 0: each consumer owns whole wgmma m64 row blocks");
  static_assert(BN == 32 || BN == 64 || BN == 128 || BN == 256,
                "BN is 32, 64, 128 or 256: a wgmma shape of hopper_wgmma_ops.cuh");
  static_assert(
      ACC_PER_THREAD <= 128,
      "2*BM*BN/(CONSUMERS*128) <= 128 fp32 accumulators (both GEMMs) per consumer thread");
  static_assert(STAGES >= 2 && STAGES <= 12, "2 <= STAGES <= 12");
  static_assert(CLUSTER_M >= 1 && CLUSTER_N >= 1 && CLUSTER_SIZE <= 8,
                "cluster dims >= 1 and at most 8 CTAs (portable cluster size)");
  static_assert(A_BOX_ROWS % 8 == 0 && B_BOX_ROWS % 8 == 0 && A_BOX_ROWS <= 256 &&
                    B_BOX_ROWS <= 256,
                "multicast slices are whole 8-row swizzle groups and TMA boxes of <= 256 rows");
  static_assert(K_ORDER == kForward || K_ORDER == kReverse, "K_ORDER is 0 or 1");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 16, "1 <= SPLIT_K <= 16");
  static_assert(SMEM_BYTES + 1024 <= STAGES * STAGE_BYTES + 2048,
                "barriers and flags fit the 2048 bytes the manifest adds to the ring");
};

}  // namespace kt_dual
