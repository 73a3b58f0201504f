// Compile-time shape of one ping-pong wgmma GEMM variant (gemm_pingpong.cuh): the tunables, the
// shared-memory layout they imply, and every assumption the kernel makes about them as
// static_asserts. Member names shared with WgmmaConfig (BM, BN, CLUSTER_*, RASTER, GROUP) let the
// raster order of gemm_wgmma_scheduler.cuh serve both kernels.
#pragma once

#include "gemm_wgmma_config.cuh"

namespace kt_pingpong {

using kt_wgmma::kForward;
using kt_wgmma::kStoreGlobal;
using kt_wgmma::kStoreTma;

template <int BM_, int BN_, int BK_, int STAGES_, int CLUSTER_M_, int CLUSTER_N_, int RASTER_,
          int GROUP_, int EPILOGUE_, int STREAM_K_>
struct PingpongConfig {
  // One consumer warpgroup owns a whole BM x BN tile; the two consumers take turns.
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_;
  static constexpr int CONSUMERS = 2;
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_;
  static constexpr int CLUSTER_SIZE = CLUSTER_M * CLUSTER_N;
  static constexpr int RASTER = RASTER_, GROUP = GROUP_;
  static constexpr int EPILOGUE = EPILOGUE_;
  static constexpr bool STREAM_K = STREAM_K_ != 0;
  // The shared producer (gemm_wgmma_mainloop.cuh) asks; ping-pong always loads k-tiles forward.
  static constexpr int K_ORDER = kForward;

  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int M_BLOCKS = BM / 64;      // wgmma m64 blocks of a consumer's tile
  static constexpr int ACC_PER_BLOCK = BN / 2;  // fp32 accumulators per thread per m64
  static constexpr int ACC = M_BLOCKS * ACC_PER_BLOCK;
  static constexpr int K_STEPS = BK / 16;

  // Ring stages as in WgmmaConfig: BK/64 panels of [rows][64] elements, 128B-swizzled rows.
  static constexpr int PANEL_K = 64;
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int A_PANEL_BYTES = BM * PANEL_K * 2;
  static constexpr int B_PANEL_BYTES = BN * PANEL_K * 2;
  static constexpr int A_STAGE_BYTES = BM * BK * 2;
  static constexpr int B_STAGE_BYTES = BN * BK * 2;
  static constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
  static constexpr int A_BOX_ROWS = BM / CLUSTER_N;
  static constexpr int B_BOX_ROWS = BN / CLUSTER_M;

  // TMA-store staging: per consumer a [BN/64][BM][64] tile of C, 128B-swizzled like the loads.
  static constexpr int C_PANELS = BN / 64;
  static constexpr int C_PANEL_BYTES = BM * 128;
  static constexpr int C_STAGE_BYTES = EPILOGUE == kStoreTma ? BM * BN * 2 : 0;

  // Dynamic shared memory after aligning its base to 1024: A stages, B stages, the two C staging
  // tiles, then full and empty mbarriers. The manifest asks for the total + 2048.
  static constexpr int A_OFFSET = 0;
  static constexpr int B_OFFSET = STAGES * A_STAGE_BYTES;
  static constexpr int C_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int BARRIER_OFFSET = C_OFFSET + CONSUMERS * C_STAGE_BYTES;
  static constexpr int SMEM_BYTES = BARRIER_OFFSET + 2 * STAGES * 8;

  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = 232;

  // Named barriers: 0 is __syncthreads; consumer c waits for its mainloop turn on ORDER + c and
  // syncs its own 128 threads in the epilogue on EPILOGUE_BARRIER + c.
  static constexpr unsigned ORDER_BARRIER = 1;
  static constexpr unsigned EPILOGUE_BARRIER = 3;

  static_assert(BK % 64 == 0, "BK % 64 == 0: a stage holds whole 64-element 128B-swizzled panels");
  static_assert(BM == 64 || BM == 128, "BM is 64 or 128: one consumer warpgroup's m64 blocks");
  static_assert(BN == 64 || BN == 128 || BN == 176 || BN == 192 || BN == 256,
                "BN is 64, 128, 176, 192 or 256: a wgmma n extent of hopper_wgmma_ops.cuh");
  static_assert(EPILOGUE == kStoreGlobal || BN % 64 == 0,
                "a TMA-store epilogue stages whole 64-column panels");
  static_assert(ACC <= 128, "BM*BN/128 <= 128 fp32 accumulators per consumer thread");
  static_assert(STAGES >= 2 && STAGES <= 12, "2 <= STAGES <= 12");
  static_assert(CLUSTER_M >= 1 && CLUSTER_N >= 1 && CLUSTER_SIZE <= 2,
                "clusters of at most 2 CTAs (the pair must be co-resident in every GPC)");
  static_assert(A_BOX_ROWS % 8 == 0 && B_BOX_ROWS % 8 == 0,
                "multicast slices are whole 8-row swizzle groups");
  static_assert(EPILOGUE == kStoreGlobal || EPILOGUE == kStoreTma, "EPILOGUE is 0 or 1");
  static_assert(!STREAM_K || CLUSTER_SIZE == 1,
                "stream-K waits on other CTAs' partial tiles: every CTA must be resident at once, "
                "which only unclustered persistent grids guarantee");
  static_assert(GROUP >= 1, "GROUP >= 1 tiles per raster band");
  static_assert(RASTER == kt_wgmma::kRasterAlongN || RASTER == kt_wgmma::kRasterAlongM,
                "RASTER is 0 or 1");
};

}  // namespace kt_pingpong
