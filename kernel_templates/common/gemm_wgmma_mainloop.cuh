// The ring, producer and per-slot wgmmas that the TMA + wgmma GEMMs share (gemm_wgmma.cuh with
// CONSUMERS warpgroups splitting a tile's rows, gemm_pingpong.cuh with two warpgroups taking
// whole tiles in turn). Cfg is a WgmmaConfig or PingpongConfig: both lay a stage out as BK/64
// panels of [rows][64] elements with 128B-swizzled rows, A stages then B stages, then the
// barriers.
#pragma once

#include "gemm_tma_store_epilogue.cuh"
#include "gemm_wgmma_config.cuh"
#include "gemm_work_list.cuh"
#include "hopper_wgmma_ops.cuh"
#include "warp_specialized.cuh"
#include "wgmma_store.cuh"

namespace kt_wgmma {

// Shared addresses of the ring: stage s of A at a + s*A_STAGE_BYTES, of B at b + s*B_STAGE_BYTES.
template <int STAGES>
struct GemmRing {
  unsigned a, b;
  kt_ws::RingBarriers<STAGES> barriers;
};

template <class Cfg>
__device__ __forceinline__ GemmRing<Cfg::STAGES> gemm_ring(unsigned base) {
  const unsigned barriers = base + Cfg::BARRIER_OFFSET;
  return {base + Cfg::A_OFFSET, base + Cfg::B_OFFSET, {barriers, barriers + Cfg::STAGES * 8}};
}

// One producer thread streams, in work-list order, every item's k-tiles (from the end with
// K_ORDER == kReverse) into the ring: this CTA's slice of the A and B tiles, multicast to the CTAs
// of its tile row (A) and tile column (B) when the cluster shares them.
template <class Cfg>
__device__ __forceinline__ void produce_tiles(const GemmRing<Cfg::STAGES>& ring,
                                              const WorkList<Cfg>& work, const KtTensorMap* tma_a,
                                              const KtTensorMap* tma_b) {
  using Peers = kt_ws::ClusterPeers<Cfg::CLUSTER_M, Cfg::CLUSTER_N>;
  kt_hopper::prefetch_tensormap(tma_a);
  kt_hopper::prefetch_tensormap(tma_b);
  const unsigned short a_peers = Peers::row(work.raster.rank_m);
  const unsigned short b_peers = Peers::column(work.raster.rank_n);
  // This CTA's slice of the shared tiles: rows and shared offset inside the stage.
  const int a_slice_row = work.raster.rank_n * Cfg::A_BOX_ROWS;
  const int b_slice_row = work.raster.rank_m * Cfg::B_BOX_ROWS;
  kt_ws::RingCursor<Cfg::STAGES> cursor;
  const int items = work.items();
  for (int j = 0; j < items; ++j) {
    const WorkItem w = work.item(j);
    const int a_row = w.tile.m * Cfg::BM + a_slice_row;
    const int b_row = w.tile.n * Cfg::BN + b_slice_row;
    for (int kt = w.k_begin; kt < w.k_end; ++kt) {
      const unsigned full = ring.barriers.acquire(cursor, Cfg::STAGE_BYTES);
      const int k0 = (Cfg::K_ORDER == kReverse ? w.k_begin + w.k_end - 1 - kt : kt) * Cfg::BK;
      const unsigned a_dst = ring.a + cursor.stage * Cfg::A_STAGE_BYTES + a_slice_row * 128;
      const unsigned b_dst = ring.b + cursor.stage * Cfg::B_STAGE_BYTES + b_slice_row * 128;
#pragma unroll
      for (int p = 0; p < Cfg::PANELS; ++p) {
        const int k = k0 + p * Cfg::PANEL_K;
        kt_ws::tma_load_2d<(Cfg::CLUSTER_N > 1)>(a_dst + p * Cfg::A_PANEL_BYTES, tma_a, full, k,
                                                 a_row, a_peers);
        kt_ws::tma_load_2d<(Cfg::CLUSTER_M > 1)>(b_dst + p * Cfg::B_PANEL_BYTES, tma_b, full, k,
                                                 b_row, b_peers);
      }
      cursor.advance();
    }
  }
}

// The wgmmas of one ring slot: per k step, the M_BLOCKS m64 blocks of the A rows whose stage-0
// descriptor is a_desc0 against the BN x BK tile of B, each `mma(acc[mb], a_desc, b_desc,
// accumulate)`. A k step reads 32 bytes of each 128-byte swizzled row (k16 of 16-bit data, k32 of
// fp8), four per panel. A stage, panel or k step only moves the start address, the descriptor's
// low field (in 16-byte units), so it is added to the 64-bit value. The first step of the first
// slot overwrites the accumulators.
template <class Cfg, class Mma>
__device__ __forceinline__ void issue_slot_with(float (&acc)[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK],
                                                unsigned long long a_desc0,
                                                unsigned long long b_desc0, int stage, bool first,
                                                Mma&& mma) {
  const unsigned long long a_stage = a_desc0 + ((stage * Cfg::A_STAGE_BYTES) >> 4);
  const unsigned long long b_stage = b_desc0 + ((stage * Cfg::B_STAGE_BYTES) >> 4);
#pragma unroll
  for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
    // k step ks: panel ks/4, 32 bytes further per step inside the 128-byte swizzled row
    const int panel = ks / 4;
    const int k_bytes = (ks % 4) * 32;
    const unsigned long long b_desc = b_stage + ((panel * Cfg::B_PANEL_BYTES + k_bytes) >> 4);
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
      const unsigned long long a_desc =
          a_stage + ((panel * Cfg::A_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
      mma(acc[mb], a_desc, b_desc, (!first || ks > 0) ? 1 : 0);
    }
  }
}

// The 16-bit GEMMs' slot: wgmma m64nBNk16.
template <class Cfg>
__device__ __forceinline__ void issue_slot(float (&acc)[Cfg::M_BLOCKS][Cfg::ACC_PER_BLOCK],
                                           unsigned long long a_desc0, unsigned long long b_desc0,
                                           int stage, bool first) {
  issue_slot_with<Cfg>(acc, a_desc0, b_desc0, stage, first,
                       [](float(&d)[Cfg::ACC_PER_BLOCK], unsigned long long a, unsigned long long b,
                          int accumulate) { kt_hopper::wgmma_m64k16_ss(d, a, b, accumulate); });
}

// Writes a consumer warpgroup's ROWS x BN tile of accumulators to C at (row0, col0). With
// STAGED (EPILOGUE == kStoreTma): through the staging tile at c_stage, then one thread's TMA
// stores, or plain copies of the staged tile when N rules out the tensor map (tma_store false);
// `barrier` syncs the warpgroup's 128 threads. Otherwise straight from registers, bounds-checked.
// After the warpgroup's last tile, thread 0 waits for its stores (bulk_wait_group<0>).
template <int ROWS, int BN, bool STAGED>
__device__ __forceinline__ void store_tile(const float (&acc)[ROWS / 64][BN / 2], elem_t* C,
                                           const KtTensorMap* map_c, int M, int N, unsigned c_stage,
                                           unsigned barrier, bool tma_store, int row0, int col0) {
  if constexpr (STAGED) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    // The previous tile's store has finished reading the staging tile.
    if (t == 0) kt_hopper::bulk_wait_group_read<0>();
    kt_hopper::named_barrier_sync(barrier, 128);
    kt_tma_store::stage_tile<ROWS, BN>(acc, c_stage);
    kt_hopper::fence_proxy_async_shared();  // st.shared before the TMA engine reads them
    kt_hopper::named_barrier_sync(barrier, 128);
    if (tma_store) {
      if (t == 0) kt_tma_store::store_staged_tile<ROWS, BN>(map_c, c_stage, row0, col0);
    } else {
      kt_tma_store::copy_staged_tile<ROWS, BN>(c_stage, C, M, N, row0, col0);
    }
  } else {
#pragma unroll
    for (int mb = 0; mb < ROWS / 64; ++mb)
      store_m64_block<BN>(acc[mb], C, M, N, row0 + mb * 64, col0);
  }
}

}  // namespace kt_wgmma
