// Compile-time shape of one fp8 wgmma GEMM variant (gemm_fp8_wgmma.cuh): the tunables, the
// shared-memory layout they imply and every assumption the kernel makes about them, as
// static_asserts. The layout follows the 16-bit WgmmaConfig with 1-byte elements: a 128-byte
// swizzled row holds 128 k-elements, so a stage is BK/128 panels and a wgmma k32 step moves 32
// bytes, as a k16 step of bf16 does; the shared producer (gemm_wgmma_mainloop.cuh) runs unchanged.
#pragma once

#include "gemm_wgmma_config.cuh"

namespace kt_fp8 {

enum Scaling { kTensorScales = 0, kBlockScales = 1 };

// DeepSeek-V3's fine-grained scales: one per 128 k-elements of a row of A, one per 128x128 block
// of B.
constexpr int kScaleBlock = 128;

template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_M_, int CLUSTER_N_,
          int RASTER_, int GROUP_, int PROMOTE_, int SCALING_, int EPILOGUE_, int STREAM_K_>
struct Fp8Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_;
  static constexpr int CONSUMERS = CONSUMERS_;
  static constexpr int CLUSTER_M = CLUSTER_M_, CLUSTER_N = CLUSTER_N_;
  static constexpr int CLUSTER_SIZE = CLUSTER_M * CLUSTER_N;
  static constexpr int RASTER = RASTER_, GROUP = GROUP_;
  static constexpr int K_ORDER = kt_wgmma::kForward;  // the shared producer asks
  static constexpr int EPILOGUE = EPILOGUE_;
  static constexpr bool STREAM_K = STREAM_K_ != 0;
  static constexpr int SCALING = SCALING_;
  // k-tiles summed by the tensor cores before their partial sums are added into fp32 registers:
  // 0 never (per-tensor scales only); block scales promote every k-tile, applying its scales.
  static constexpr int PROMOTE = SCALING == kBlockScales ? 1 : PROMOTE_;
  static constexpr bool PROMOTING = PROMOTE > 0;

  static constexpr int THREADS = (CONSUMERS + 1) * 128;
  static constexpr int CONSUMER_ROWS = BM / CONSUMERS;
  static constexpr int M_BLOCKS = CONSUMER_ROWS / 64;
  static constexpr int ACC_PER_BLOCK = BN / 2;
  static constexpr int ACC = M_BLOCKS * ACC_PER_BLOCK;
  static constexpr int K_STEPS = BK / 32;  // wgmma k32 steps per stage

  static constexpr int PANEL_K = 128;  // fp8 elements of one 128-byte swizzled row
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int A_PANEL_BYTES = BM * PANEL_K;
  static constexpr int B_PANEL_BYTES = BN * PANEL_K;
  static constexpr int A_STAGE_BYTES = BM * BK;
  static constexpr int B_STAGE_BYTES = BN * BK;
  static constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;
  static constexpr int A_BOX_ROWS = BM / CLUSTER_N;
  static constexpr int B_BOX_ROWS = BN / CLUSTER_M;

  // bf16 output staged per consumer for TMA stores (EPILOGUE 1), as in the 16-bit GEMM.
  static constexpr int C_STAGE_BYTES = EPILOGUE == kt_wgmma::kStoreTma ? CONSUMER_ROWS * BN * 2 : 0;
  static constexpr int A_OFFSET = 0;
  static constexpr int B_OFFSET = STAGES * A_STAGE_BYTES;
  static constexpr int C_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int BARRIER_OFFSET = C_OFFSET + CONSUMERS * C_STAGE_BYTES;
  static constexpr int SMEM_BYTES = BARRIER_OFFSET + 2 * STAGES * 8;

  static constexpr unsigned CONSUMER_BARRIER = 1;
  static constexpr int PRODUCER_REGISTERS = 40;
  static constexpr int CONSUMER_REGISTERS = CONSUMERS == 1 ? 240 : 232;

  static_assert(BK % PANEL_K == 0, "BK % 128 == 0: a stage holds whole 128-byte swizzled panels");
  static_assert(SCALING == kTensorScales || SCALING == kBlockScales, "SCALING is 0 or 1");
  static_assert(SCALING == kTensorScales || BK == kScaleBlock,
                "block scales need BK == 128: one scale block of A and B per k-tile");
  static_assert(SCALING == kTensorScales || kScaleBlock % BN == 0,
                "block scales need BN dividing 128: a tile's columns share one scale block of B");
  static_assert(PROMOTE_ >= 0, "PROMOTE >= 0");
  static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
  static_assert(BM % (64 * CONSUMERS) == 0,
                "BM % (64*CONSUMERS) == 0: each consumer owns whole wgmma m64 row blocks");
  static_assert(BN == 32 || BN == 64 || BN == 128 || BN == 192 || BN == 256,
                "BN is 32, 64, 128, 192 or 256: an fp8 wgmma shape the epilogue stores");
  static_assert(ACC * (PROMOTING ? 2 : 1) <= 128,
                "at most 128 fp32 accumulators per consumer thread (twice ACC when promoting: "
                "the tensor cores' partial sums and the promoted ones)");
  static_assert(STAGES >= 2 && STAGES <= 12, "2 <= STAGES <= 12");
  static_assert(CLUSTER_M >= 1 && CLUSTER_N >= 1 && CLUSTER_SIZE <= 8,
                "cluster dims >= 1 and at most 8 CTAs (portable cluster size)");
  static_assert(A_BOX_ROWS % 8 == 0 && B_BOX_ROWS % 8 == 0 && A_BOX_ROWS <= 256 &&
                    B_BOX_ROWS <= 256,
                "multicast slices are whole 8-row swizzle groups and TMA boxes of <= 256 rows");
  static_assert(GROUP >= 1, "GROUP >= 1 tiles per raster band");
  static_assert(RASTER == kt_wgmma::kRasterAlongN || RASTER == kt_wgmma::kRasterAlongM,
                "RASTER is 0 or 1");
  static_assert(EPILOGUE == kt_wgmma::kStoreGlobal || EPILOGUE == kt_wgmma::kStoreTma,
                "EPILOGUE is 0 or 1");
  static_assert(EPILOGUE == kt_wgmma::kStoreGlobal || BN % 64 == 0,
                "a TMA-store epilogue stages whole 64-column panels");
  static_assert(!STREAM_K || CLUSTER_SIZE == 1,
                "stream-K waits on other CTAs' partial tiles: every CTA must be resident at once, "
                "which only unclustered persistent grids guarantee");
};

}  // namespace kt_fp8
