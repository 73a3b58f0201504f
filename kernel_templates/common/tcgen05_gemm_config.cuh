// Compile-time shape of one Blackwell tcgen05 GEMM variant (tcgen05_gemm_kernel.cuh), for the
// plain GEMM (NUM_B = 1) and the dual GEMM (NUM_B = 2: B1 and B2 share the A tile), 16-bit, fp8
// or block-scaled NVFP4 operands (SCALE_VEC = 16; see below): the
// tunables, the shared-memory and tensor-memory layout they imply, and every assumption the kernel
// makes about them as static_asserts (the manifests state the same rules as constraints, so
// pruning happens before compiling).
#pragma once

#include "grouped_tile_scheduler.cuh"

namespace kt_tcgen05 {

enum KOrder { kForward = 0, kReverse = 1 };

template <int NUM_B_, int BM_, int BN_, int BK_, int STAGES_, int CTA_GROUP_, int MULTICAST_,
          int ACC_STAGES_, int TMEM_COLS_, int RASTER_, int BAND_, int GROUP_ORDER_, int K_ORDER_,
          int ELEM_BYTES_ = 2, int SCALE_VEC_ = 0>
struct Tcgen05Config {
  static constexpr int NUM_B = NUM_B_;  // B operands per A tile: 1 (GEMM) or 2 (dual GEMM)
  static constexpr int BM = BM_;        // MMA rows of the CTA group: 128 per CTA
  static constexpr int BN = BN_;        // MMA N: columns of C per tile
  static constexpr int BK = BK_, STAGES = STAGES_;
  static constexpr int CTA_GROUP = CTA_GROUP_;    // 1, or 2: a CTA pair runs one M=256 MMA
  static constexpr int MULTICAST = MULTICAST_;    // CTA groups along M sharing B by TMA multicast
  static constexpr int ACC_STAGES = ACC_STAGES_;  // TMEM accumulator buffers (2: epilogue overlap)
  static constexpr int TMEM_COLS = TMEM_COLS_;    // TMEM columns allocated
  static constexpr int RASTER = RASTER_, BAND = BAND_, GROUP_ORDER = GROUP_ORDER_;
  static constexpr int K_ORDER = K_ORDER_;

  static constexpr int CLUSTER_SIZE = CTA_GROUP * MULTICAST;
  static constexpr int CTA_ROWS = 128;  // rows of A and accumulator lanes held by one CTA
  static constexpr int THREADS = 192;   // warp 0 TMA, warp 1 TMEM + MMA, warps 2..5 epilogue
  static constexpr int EPILOGUE_WARPS = 4;
  // Operand element size: 2 (kind::f16: bf16, fp16) or 1 (kind::f8f6f4: e4m3, e5m2). Either MMA
  // consumes 32 bytes of K per op (K = 16 or 32), so the descriptors step alike.
  static constexpr int ELEM_BYTES = ELEM_BYTES_;
  static constexpr int K_STEPS = BK * ELEM_BYTES / 32;

  // Block scales (NVFP4: kind::mxf4nvf4, e2m1 operands): SCALE_VEC = 16 k-elements per ue4m3
  // factor, 0 without block scales. The core then sees packed e2m1 operands as bytes (BK, K and
  // the tensor maps count bytes, two k-elements each), so one 32-byte k step is one K=64 MMA
  // whose 128 rows' factors are one 512-byte atom (nvfp4_block_scale.cuh has the layout). Every
  // stage carries, per k step, A's atom and BN/128 atoms of each B (B's rows in whole atoms);
  // the MMA issuer copies them into TMEM columns after the accumulators (4 per atom).
  static constexpr int SCALE_VEC = SCALE_VEC_;
  static constexpr bool BLOCK_SCALED = SCALE_VEC > 0;
  static constexpr int SCALE_ATOM_BYTES = 512;
  static constexpr int SCALE_ATOM_COLUMNS = 4;
  static constexpr int SFB_ATOMS = BLOCK_SCALED ? BN / 128 : 0;
  static constexpr int SFA_STAGE_BYTES = BLOCK_SCALED ? K_STEPS * SCALE_ATOM_BYTES : 0;
  static constexpr int SFB_STAGE_BYTES = K_STEPS * SFB_ATOMS * SCALE_ATOM_BYTES;

  // Rows of each B operand in this CTA's shared memory (a CTA pair splits B's rows between its
  // two CTAs; the MMA reads both halves), and the rows this CTA loads of them (1-CTA groups along
  // M that share B each load a slice and multicast it).
  static constexpr int B_CTA_ROWS = BN / CTA_GROUP;
  static constexpr int B_BOX_ROWS = B_CTA_ROWS / MULTICAST;

  // Tiles are panels of [rows][PANEL_K] elements (128-byte rows, 128B swizzle): 64 16-bit or 128
  // fp8 elements per row.
  static constexpr int PANEL_K = 128 / ELEM_BYTES;
  static constexpr int PANELS = BK / PANEL_K;
  static constexpr int A_PANEL_BYTES = CTA_ROWS * 128;
  static constexpr int B_PANEL_BYTES = B_CTA_ROWS * 128;
  static constexpr int A_STAGE_BYTES = CTA_ROWS * BK * ELEM_BYTES;
  static constexpr int B_STAGE_BYTES = B_CTA_ROWS * BK * ELEM_BYTES;
  static constexpr int OPERAND_STAGE_BYTES = A_STAGE_BYTES + NUM_B * B_STAGE_BYTES;
  static constexpr int STAGE_BYTES =  // lands in one CTA
      OPERAND_STAGE_BYTES + SFA_STAGE_BYTES + NUM_B * SFB_STAGE_BYTES;
  // Bytes completed on one full barrier per stage: a pair's halves both land on the even CTA's.
  static constexpr int FULL_TX_BYTES = CTA_GROUP * STAGE_BYTES;

  // Tensor memory: per accumulator stage, NUM_B accumulators of BN fp32 columns x 128 lanes.
  static constexpr int ACC_COLUMNS = NUM_B * BN;
  static constexpr int SFA_COLUMN = ACC_STAGES * ACC_COLUMNS;  // + k step * 4
  static constexpr int SFB_COLUMN =  // + (b * K_STEPS + k step) * SFB_ATOMS * 4
      SFA_COLUMN + (BLOCK_SCALED ? K_STEPS * SCALE_ATOM_COLUMNS : 0);
  static constexpr int TMEM_NEEDED = SFB_COLUMN + NUM_B * K_STEPS * SFB_ATOMS * SCALE_ATOM_COLUMNS;

  // Dynamic shared memory after aligning its base to 1024 bytes: A stages, then for each B
  // operand its stages, then the scale atoms (A's stages, then each B's), then the mbarriers (full,
  // empty per stage; tmem_full, tmem_empty per accumulator stage) and the word tcgen05.alloc writes
  // the TMEM base to. The manifest asks for STAGES*STAGE_BYTES + 2048 (alignment slack + this
  // tail).
  static constexpr int A_OFFSET = 0;
  static constexpr int B_OFFSET = STAGES * A_STAGE_BYTES;  // + b * STAGES * B_STAGE_BYTES
  static constexpr int SFA_OFFSET = STAGES * OPERAND_STAGE_BYTES;
  static constexpr int SFB_OFFSET = SFA_OFFSET + STAGES * SFA_STAGE_BYTES;  // + b*STAGES*SFB_STAGE
  static constexpr int BARRIER_OFFSET = STAGES * STAGE_BYTES;
  static constexpr int FULL_OFFSET = BARRIER_OFFSET;
  static constexpr int EMPTY_OFFSET = FULL_OFFSET + 8 * STAGES;
  static constexpr int TMEM_FULL_OFFSET = EMPTY_OFFSET + 8 * STAGES;
  static constexpr int TMEM_EMPTY_OFFSET = TMEM_FULL_OFFSET + 8 * ACC_STAGES;
  static constexpr int TMEM_SLOT_OFFSET = TMEM_EMPTY_OFFSET + 8 * ACC_STAGES;
  static constexpr int SMEM_BYTES = TMEM_SLOT_OFFSET + 4;

  using Scheduler =
      kt_sched::GroupedTileScheduler<BM, BN, MULTICAST, 1, RASTER, BAND, 1, GROUP_ORDER>;

  static_assert(NUM_B == 1 || NUM_B == 2, "NUM_B is 1 (GEMM) or 2 (dual GEMM)");
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "CTA_GROUP is 1 or 2");
  static_assert(BM == 128 * CTA_GROUP,
                "BM == 128*CTA_GROUP: each CTA holds 128 accumulator lanes (M=128 per CTA; the "
                "lane layouts of M=64 are not used)");
  static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256,
                "tcgen05.mma kind::f16 with M=128 or 256: N is 16..256 and a multiple of 16");
  static_assert(CTA_GROUP == 1 || BN >= 32, "a CTA pair holds BN/2 >= 16 rows of B each");
  static_assert(ELEM_BYTES == 1 || ELEM_BYTES == 2, "operands of 1 (fp8) or 2 (bf16, fp16) bytes");
  static_assert(BK % PANEL_K == 0,
                "BK % PANEL_K == 0: a stage holds whole 128-byte swizzled panels (64 16-bit or 128 "
                "fp8 elements)");
  static_assert(STAGES >= 2 && STAGES <= 16, "2 <= STAGES <= 16");
  static_assert(MULTICAST == 1 || MULTICAST == 2, "MULTICAST is 1 or 2");
  static_assert(CTA_GROUP == 1 || MULTICAST == 1,
                "B multicast between CTA groups only for 1-CTA groups (a pair already splits B)");
  static_assert(B_BOX_ROWS % 8 == 0 && B_BOX_ROWS <= 256,
                "B slices are whole 8-row swizzle groups (the descriptors step 1024 B per 8 rows) "
                "and TMA boxes of <= 256 rows");
  static_assert(ACC_STAGES == 1 || ACC_STAGES == 2, "1 or 2 accumulator stages");
  static_assert(TMEM_COLS >= 32 && TMEM_COLS <= 512 && (TMEM_COLS & (TMEM_COLS - 1)) == 0,
                "tcgen05.alloc: TMEM_COLS is a power of two in 32..512");
  static_assert(TMEM_NEEDED <= TMEM_COLS,
                "ACC_STAGES*NUM_B*BN (+ the scale columns of block scales) <= TMEM_COLS: every "
                "accumulator fits the allocated columns");
  static_assert(SCALE_VEC == 0 || SCALE_VEC == 16,
                "SCALE_VEC is 0 (no block scales) or 16 (NVFP4: ue4m3 per 16 k-elements)");
  static_assert(!BLOCK_SCALED || ELEM_BYTES == 1,
                "block-scaled e2m1 operands travel as bytes (ELEM_BYTES == 1, BK in bytes)");
  static_assert(!BLOCK_SCALED || BN % 128 == 0,
                "block scales: BN % 128 == 0 (B's factors come in atoms of 128 rows)");
  static_assert(RASTER == 0 || RASTER == 1, "RASTER is 0 or 1");
  static_assert(K_ORDER == kForward || K_ORDER == kReverse, "K_ORDER is 0 or 1");
  static_assert(SMEM_BYTES + 1024 <= STAGES * STAGE_BYTES + 2048,
                "barriers fit the 2048 bytes the manifest adds to the ring");
};

}  // namespace kt_tcgen05
