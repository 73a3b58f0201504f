// Compile-time shape of one warp-specialised wgmma GEMM variant (gemm_wgmma.cuh): the tunables,
// the shared-memory layout they imply, and every assumption the kernel makes about them as
// static_asserts, so a variant that breaks one fails to compile with the reason in the log.
#pragma once

namespace kt_wgmma {

enum Raster { kRasterAlongN = 0, kRasterAlongM = 1 };
enum KOrder { kForward = 0, kReverse = 1 };

enum Epilogue { kStoreGlobal = 0, kStoreTma = 1 };

template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_M_, int CLUSTER_N_,
          int RASTER_, int GROUP_, int K_ORDER_, int EPILOGUE_ = kStoreGlobal, int STREAM_K_ = 0>
struct WgmmaConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_;
  static constexpr int CONSUMERS = CONSUMERS_;  // consumer warpgroups; one producer besides
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_;
  static constexpr int CLUSTER_SIZE = CLUSTER_M * CLUSTER_N;
  static constexpr int RASTER = RASTER_, GROUP = GROUP_, K_ORDER = K_ORDER_;
  static constexpr int EPILOGUE = EPILOGUE_;
  static constexpr bool STREAM_K = STREAM_K_ != 0;  // see gemm_work_list.cuh

  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int CONSUMER_ROWS = BM / CONSUMERS;  // tile rows of one consumer warpgroup
  static constexpr int M_BLOCKS = CONSUMER_ROWS / 64;   // wgmma m64 blocks per consumer
  static constexpr int ACC_PER_BLOCK = BN / 2;          // fp32 accumulators per thread per m64
  static constexpr int ACC = M_BLOCKS * ACC_PER_BLOCK;  // per consumer thread
  static constexpr int K_STEPS = BK / 16;               // wgmma k16 steps per stage

  // Tiles are stored as BK/64 "panels" of [rows][64] elements: one 128-byte swizzled row each,
  // the layout a TMA box {64, rows} with 128B swizzle writes and a 128B-swizzle descriptor reads.
  static constexpr int PANEL_K = 64;
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int A_PANEL_BYTES = BM * PANEL_K * 2;
  static constexpr int B_PANEL_BYTES = BN * PANEL_K * 2;
  static constexpr int A_STAGE_BYTES = BM * BK * 2;
  static constexpr int B_STAGE_BYTES = BN * BK * 2;
  static constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;  // TMA bytes per stage

  // Multicast: the CLUSTER_N CTAs of a cluster row share the A tile, each loading
  // BM/CLUSTER_N rows of it for all; the CLUSTER_M CTAs of a column share B likewise.
  static constexpr int A_BOX_ROWS = BM / CLUSTER_N;
  static constexpr int B_BOX_ROWS = BN / CLUSTER_M;

  // TMA-store staging (EPILOGUE 1): per consumer its CONSUMER_ROWS x BN part of the C tile as
  // [BN/64 panels][rows][64], 128B-swizzled (gemm_tma_store_epilogue.cuh).
  static constexpr int C_STAGE_BYTES = EPILOGUE == kStoreTma ? CONSUMER_ROWS * BN * 2 : 0;

  // Layout of the dynamic shared memory after aligning its base to 1024 bytes: A stages, B
  // stages, the consumers' C staging, then the full and empty mbarriers. The manifest asks for
  // STAGES*STAGE_BYTES + CONSUMERS*C_STAGE_BYTES + 2048.
  static constexpr int A_OFFSET = 0;
  static constexpr int B_OFFSET = STAGES * A_STAGE_BYTES;
  static constexpr int C_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int BARRIER_OFFSET = C_OFFSET + CONSUMERS * C_STAGE_BYTES;
  static constexpr int SMEM_BYTES = BARRIER_OFFSET + 2 * STAGES * 8;

  // Named barrier of consumer c's 128 threads (0 is __syncthreads).
  static constexpr unsigned CONSUMER_BARRIER = 1;

  // Registers after setmaxnreg: the producer only issues copies; consumers hold the accumulators.
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = CONSUMERS == 1 ? 240 : 232;

  static_assert(BK % 64 == 0, "BK % 64 == 0: a stage holds whole 64-element 128B-swizzled panels");
  static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
  static_assert(BM % (64 * CONSUMERS) == 0,
                "BM % (64*CONSUMERS) == 0: each consumer owns whole wgmma m64 row blocks");
  static_assert(BN % 16 == 0 && BN >= 32 && BN <= 256,
                "BN is 32..256 and a multiple of 16 (one wgmma n-extent; the epilogue packs 32 "
                "columns per quad and stores a trailing 16 pairwise)");
  static_assert(BN == 32 || BN == 64 || BN == 128 || BN == 176 || BN == 192 || BN == 256,
                "BN is 32, 64, 128, 176, 192 or 256: a wgmma shape of hopper_wgmma_ops.cuh");
  // 176 and 192 (with BM 128) leave room for a 5-stage ring; cuBLAS's large-GEMM tile is 176 wide.
  static_assert(M_BLOCKS * ACC_PER_BLOCK <= 128,
                "BM*BN/(CONSUMERS*128) <= 128 fp32 accumulators per consumer thread");
  static_assert(STAGES >= 2 && STAGES <= 12, "2 <= STAGES <= 12");
  static_assert(CLUSTER_M >= 1 && CLUSTER_N >= 1 && CLUSTER_SIZE <= 8,
                "cluster dims >= 1 and at most 8 CTAs (portable cluster size)");
  static_assert(A_BOX_ROWS % 8 == 0 && B_BOX_ROWS % 8 == 0 && A_BOX_ROWS <= 256 &&
                    B_BOX_ROWS <= 256,
                "multicast slices are whole 8-row swizzle groups and TMA boxes of <= 256 rows");
  static_assert(GROUP >= 1, "GROUP >= 1 tiles per raster band");
  static_assert(RASTER == kRasterAlongN || RASTER == kRasterAlongM, "RASTER is 0 or 1");
  static_assert(K_ORDER == kForward || K_ORDER == kReverse, "K_ORDER is 0 or 1");
  static_assert(EPILOGUE == kStoreGlobal || EPILOGUE == kStoreTma, "EPILOGUE is 0 or 1");
  static_assert(EPILOGUE == kStoreGlobal || BN % 64 == 0,
                "a TMA-store epilogue stages whole 64-column panels");
  static_assert(!STREAM_K || CLUSTER_SIZE == 1,
                "stream-K waits on other CTAs' partial tiles: every CTA must be resident at once, "
                "which only unclustered persistent grids guarantee");
};

}  // namespace kt_wgmma
