// Blackwell (sm_100a) GEMM core on tcgen05, shared by the gemm family (NUM_B = 1) and the
// dual_gemm_silu family (NUM_B = 2: C = silu(A*B1^T) (.) (A*B2^T)): for every group g of G,
// A_g [M,K], B_g [N,K], C_g [M,N] row-major, 16-bit in and out, fp32 accumulation in tensor
// memory. Written from the PTX ISA; not yet run on hardware (see the manifests).
//
// Warp roles, 192 threads per CTA:
//   warp 0     one thread streams, per k-tile, this CTA's A rows and B rows with TMA (128B
//              swizzle, zero fill, 3-D tensor maps over [G][rows][K]) into a STAGES-deep ring of
//              full/empty mbarriers;
//   warp 1     allocates TMEM (ACC_STAGES x NUM_B accumulators of BN fp32 columns), and one thread
//              issues tcgen05.mma (K=16 per op) for the ring's stages, committing each stage back
//              to its empty barrier and each finished tile to a tmem_full barrier;
//   warps 2-5  the epilogue: tcgen05.ld of its 32 TMEM lanes (warp % 4 selects the sub-partition),
//              the SiLU product for the dual GEMM, 16-bit stores to C (bounds-checked), then a
//              tmem_empty arrival so the MMA may reuse the accumulator stage.
// With ACC_STAGES == 2 the epilogue of one tile overlaps the MMAs of the next.
//
// CTA_GROUP == 2: a cluster of 2 CTAs along M runs each M=256 MMA (cta_group::2). Each CTA loads
// its 128 rows of A and its half of every B tile into its own shared memory, completing the bytes
// on the even CTA's full barrier (which expects both halves); only the even CTA issues MMAs; its
// commits arrive on the empty and tmem_full barriers of both CTAs; both epilogues read their own
// TMEM (rows 0..127 in the even CTA, 128..255 in the odd one) and arrive on the even CTA's
// tmem_empty barrier. MULTICAST == 2 (with 1-CTA groups): two CTAs along M share the B tiles, each
// loading half and multicasting it, each committing its stages to both CTAs' empty barriers.
//
// Persistent over groups and tiles (kt_sched::GroupedTileScheduler; a grid of one cluster per
// tile runs each once).
//
// NVFP4 (KT_DTYPE_NVFP4, a config with SCALE_VEC 16): packed e2m1 operands seen as bytes, and per
// k-tile the TMA warp also loads the tile's ue4m3 scale atoms (A's 128 rows, every B's BN rows; a
// CTA pair's both land on the even CTA's barrier, each CTA holding its own A rows' and all of
// B's); the MMA thread copies them into TMEM (tcgen05.cp) and issues kind::mxf4nvf4 block-scaled
// MMAs; the epilogue applies the per-tensor global scales.
#pragma once

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL)
#error "tcgen05_gemm_kernel.cuh needs sm_100a: tcgen05 and tensor memory exist on no other target"
#endif

#include "blackwell_primitives.cuh"
#include "hopper_primitives.cuh"
#include "mma_primitives.cuh"
#include "pipeline_ring.cuh"
#include "silu.cuh"
#include "tcgen05_gemm_config.cuh"

namespace kt_tcgen05 {

using kt_mma::elem_t;
using kt_pipe::RingCursor;
using kt_sched::WorkTile;

// Shared addresses (this CTA's) of the ring, the barriers and the TMEM slot.
struct SharedLayout {
  unsigned a, b, full, empty, tmem_full, tmem_empty, tmem_slot;
  unsigned sfa, sfb;  // block scales only
};

// Tensor maps of the block scales (NVFP4): A's and each B's, 3-D byte views [G*atoms of 128 rows]
// [2 rows per 64 k-elements][256 bytes] (the atom layout of nvfp4_block_scale.cuh), and the
// global scale of the second accumulator (the dual GEMM's up projection).
struct BlockScaleMaps {
  const KtTensorMap* sfa = nullptr;
  const KtTensorMap* sfb0 = nullptr;
  const KtTensorMap* sfb1 = nullptr;
  float second_scale = 1.0f;
};

// Where this CTA sits in its cluster.
struct ClusterPlace {
  unsigned rank;         // in the cluster
  int half;              // 0 or 1: which 128 rows of a pair's tile (0 without pairs)
  int unit;              // index of its CTA group along M among the MULTICAST ones
  unsigned leader_rank;  // the even CTA of its pair (itself without pairs)
};

// Writes 16 columns [col, col+16) of one row of C, whichever are inside it.
__device__ __forceinline__ void store_row_16(elem_t* __restrict__ row_ptr, int N, int col,
                                             const unsigned (&w)[8]) {
  if (col >= N) return;
  if ((N % 8) == 0 && col + 16 <= N) {  // 16-byte aligned: two vector stores
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(row_ptr + col), "r"(w[0]),
                 "r"(w[1]), "r"(w[2]), "r"(w[3])
                 : "memory");
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(row_ptr + col + 8), "r"(w[4]),
                 "r"(w[5]), "r"(w[6]), "r"(w[7])
                 : "memory");
    return;
  }
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    if (col + e < N) row_ptr[col + e] = static_cast<elem_t>(w[e / 2] >> (16 * (e % 2)));
  }
}

template <class Cfg>
struct Tcgen05Kernel {
  using Scheduler = typename Cfg::Scheduler;
  static constexpr bool kBf16 =
#if defined(KT_DTYPE_BF16)
      true;
#else
      false;
#endif
  // fp8 operands (kind::f8f6f4; the fp8 GEMM's A e4m3 or e5m2, B e4m3) write a bf16 C.
#if defined(KT_DTYPE_E4M3) || defined(KT_DTYPE_E5M2)
  static constexpr bool kFp8 = true;
#if defined(KT_DTYPE_E5M2)
  static constexpr unsigned kFp8AFormat = 1;
#else
  static constexpr unsigned kFp8AFormat = 0;
#endif
  static constexpr unsigned kIdesc =
      kt_blackwell::InstructionDescriptorF8<Cfg::BM, Cfg::BN, kFp8AFormat, 0>::value;
#else
  static constexpr bool kFp8 = false;
#if defined(KT_DTYPE_NVFP4)
  static constexpr unsigned kIdesc =
      kt_blackwell::InstructionDescriptorNvfp4<Cfg::BM, Cfg::BN>::value;
#else
  static constexpr unsigned kIdesc =
      kt_blackwell::InstructionDescriptor<Cfg::BM, Cfg::BN, kBf16>::value;
#endif
#endif
  // NVFP4 (e2m1 operands with ue4m3 block scales) writes a bf16 C too.
  static constexpr bool kNvfp4 =
#if defined(KT_DTYPE_NVFP4)
      true;
#else
      false;
#endif
  // fp8 and NVFP4 outputs are multiplied by their per-tensor scales; 16-bit ones are not.
  static constexpr bool kScaledOutput = kFp8 || kNvfp4;
  static_assert(Cfg::ELEM_BYTES == (kFp8 || kNvfp4 ? 1 : 2),
                "the config's operand size is the dtype's: 1 byte for fp8 (and for NVFP4's packed "
                "e2m1 pairs), 2 for bf16 and fp16");
  static_assert(Cfg::BLOCK_SCALED == kNvfp4,
                "NVFP4 and only NVFP4 takes a block-scaled config (SCALE_VEC 16)");
  static constexpr unsigned short kClusterMask =
      static_cast<unsigned short>((1u << Cfg::CLUSTER_SIZE) - 1u);

  // `scale` multiplies every output of an fp8 or NVFP4 GEMM (its per-tensor sa * sb; the dual
  // GEMM's first accumulator, `block_scales.second_scale` its second); 16-bit ones ignore it. K
  // counts bytes of a row for NVFP4 (K/2 k-elements).
  static __device__ __forceinline__ void run(elem_t* __restrict__ C, const KtTensorMap* tma_a,
                                             const KtTensorMap* tma_b0, const KtTensorMap* tma_b1,
                                             int G, int M, int N, int K, float scale = 1.0f,
                                             const BlockScaleMaps& block_scales = {}) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // 128B-swizzled tiles must start on 1024-byte boundaries (the descriptors' base offset is 0).
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const SharedLayout s{
        base + Cfg::A_OFFSET,         base + Cfg::B_OFFSET,         base + Cfg::FULL_OFFSET,
        base + Cfg::EMPTY_OFFSET,     base + Cfg::TMEM_FULL_OFFSET, base + Cfg::TMEM_EMPTY_OFFSET,
        base + Cfg::TMEM_SLOT_OFFSET, base + Cfg::SFA_OFFSET,       base + Cfg::SFB_OFFSET};
    ClusterPlace place{0u, 0, 0, 0u};
    if constexpr (Cfg::CLUSTER_SIZE > 1) place.rank = kt_hopper::cluster_ctarank();
    place.half = static_cast<int>(place.rank) % Cfg::CTA_GROUP;
    place.unit = static_cast<int>(place.rank) / Cfg::CTA_GROUP;
    place.leader_rank = place.rank - static_cast<unsigned>(place.half);
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;

    if (threadIdx.x == 0) {
      for (int i = 0; i < Cfg::STAGES; ++i) {
        kt_hopper::mbarrier_init(s.full + 8 * i, 1);  // the (even CTA's) producer's expect_tx
        // one commit per stage from every MMA issuer whose operands this CTA's slot feeds
        kt_hopper::mbarrier_init(s.empty + 8 * i, Cfg::CTA_GROUP == 1 ? Cfg::MULTICAST : 1);
      }
      for (int i = 0; i < Cfg::ACC_STAGES; ++i) {
        kt_hopper::mbarrier_init(s.tmem_full + 8 * i, 1);
        kt_hopper::mbarrier_init(s.tmem_empty + 8 * i, Cfg::EPILOGUE_WARPS * Cfg::CTA_GROUP);
      }
      kt_hopper::fence_mbarrier_init();
    }
    if (warp == 1) {
      kt_blackwell::tmem_alloc<Cfg::CTA_GROUP>(s.tmem_slot, Cfg::TMEM_COLS);
      kt_blackwell::tmem_relinquish_alloc_permit<Cfg::CTA_GROUP>();
    }
    // Barriers and the TMEM base must be visible to every role (and to the peers, which arrive
    // on our barriers and multicast into our ring) before anyone uses them.
    kt_blackwell::fence_before_thread_sync();
    cta_or_cluster_sync();
    kt_blackwell::fence_after_thread_sync();
    unsigned tmem_base;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(tmem_base) : "r"(s.tmem_slot) : "memory");

    const Scheduler scheduler(G, M, N, place.unit, 0,
                              static_cast<int>(blockIdx.x) / Cfg::CLUSTER_SIZE,
                              static_cast<int>(gridDim.x) / Cfg::CLUSTER_SIZE);
    const int k_tiles = kt_sched::cdiv(K, Cfg::BK);
    if (warp == 0) {
      if (lane == 0)
        produce(s, place, scheduler, tma_a, tma_b0, tma_b1, block_scales, M, N, k_tiles);
    } else if (warp == 1) {
      if (lane == 0 && place.half == 0) issue_mma(s, scheduler, tmem_base, k_tiles);
      __syncwarp();
    } else {
      drain(s, place, scheduler, tmem_base, C, M, N, warp % 4, lane, scale,
            block_scales.second_scale);
    }

    // Nothing may still read or write TMEM, and no peer may still arrive on our barriers, when
    // the columns are given back (a pair deallocates together).
    kt_blackwell::fence_before_thread_sync();
    cta_or_cluster_sync();
    if (warp == 1) {
      kt_blackwell::fence_after_thread_sync();
      kt_blackwell::tmem_dealloc<Cfg::CTA_GROUP>(tmem_base, Cfg::TMEM_COLS);
    }
  }

  static __device__ __forceinline__ void cta_or_cluster_sync() {
    if constexpr (Cfg::CLUSTER_SIZE > 1) {
      kt_hopper::cluster_sync();
    } else {
      __syncthreads();
    }
  }

  static __device__ __forceinline__ const KtTensorMap* b_map(int b, const KtTensorMap* tma_b0,
                                                             const KtTensorMap* tma_b1) {
    return b == 0 ? tma_b0 : tma_b1;
  }

  // One box of this CTA's part of a tile into `dst`, its bytes completed on `full` (ours) or, in
  // a CTA pair, on the even CTA's.
  template <bool kMulticast>
  static __device__ __forceinline__ void load(unsigned dst, const KtTensorMap* map, unsigned full,
                                              unsigned leader_full, int k, int row, int g) {
    if constexpr (Cfg::CTA_GROUP == 2) {
      kt_blackwell::tma_load_3d_pair(dst, map, leader_full, k, row, g);
    } else if constexpr (kMulticast) {
      kt_hopper::tma_load_3d_multicast(dst, map, full, k, row, g, kClusterMask);
    } else {
      kt_hopper::tma_load_3d(dst, map, full, k, row, g);
    }
  }

  static __device__ __forceinline__ void produce(
      const SharedLayout& s, const ClusterPlace& place, const Scheduler& scheduler,
      const KtTensorMap* tma_a, const KtTensorMap* tma_b0, const KtTensorMap* tma_b1,
      const BlockScaleMaps& block_scales, int M, int N, int k_tiles) {
    kt_hopper::prefetch_tensormap(tma_a);
    for (int b = 0; b < Cfg::NUM_B; ++b) kt_hopper::prefetch_tensormap(b_map(b, tma_b0, tma_b1));
    // Rows of B this CTA loads: its half of a pair's tile, or its multicast slice; the slice's
    // place in the shared B stage (a pair's halves both sit at offset 0 of their own CTA).
    const int b_part = Cfg::CTA_GROUP == 2 ? place.half : place.unit;
    const int b_smem_row = Cfg::CTA_GROUP == 2 ? 0 : place.unit * Cfg::B_BOX_ROWS;
    RingCursor<Cfg::STAGES> cursor;
    for (int u = scheduler.first; u < scheduler.total; u += scheduler.stride) {
      const WorkTile w = scheduler.work(u);
      const int a_row = w.m * Cfg::BM + place.half * Cfg::CTA_ROWS;
      const int b_row = w.n * Cfg::BN + b_part * Cfg::B_BOX_ROWS;
      for (int i = 0; i < k_tiles; ++i) {
        const int kt = Cfg::K_ORDER == kReverse ? k_tiles - 1 - i : i;
        const unsigned full = s.full + 8 * cursor.stage;
        kt_hopper::mbarrier_wait(s.empty + 8 * cursor.stage, cursor.phase ^ 1u);
        if (place.half == 0) kt_hopper::mbarrier_arrive_expect_tx(full, Cfg::FULL_TX_BYTES);
        const unsigned leader_full =
            Cfg::CTA_GROUP == 2 ? kt_hopper::map_shared_rank(full, place.leader_rank) : full;
        const unsigned a_dst = s.a + cursor.stage * Cfg::A_STAGE_BYTES;
        const unsigned b_dst = s.b + cursor.stage * Cfg::B_STAGE_BYTES + b_smem_row * 128;
#pragma unroll
        for (int p = 0; p < Cfg::PANELS; ++p) {
          const int k = kt * Cfg::BK + p * Cfg::PANEL_K;
          load<false>(a_dst + p * Cfg::A_PANEL_BYTES, tma_a, full, leader_full, k, a_row, w.group);
#pragma unroll
          for (int b = 0; b < Cfg::NUM_B; ++b) {
            load<(Cfg::MULTICAST > 1)>(
                b_dst + b * Cfg::STAGES * Cfg::B_STAGE_BYTES + p * Cfg::B_PANEL_BYTES,
                b_map(b, tma_b0, tma_b1), full, leader_full, k, b_row, w.group);
          }
        }
        if constexpr (Cfg::BLOCK_SCALED)
          load_scales(s, block_scales, cursor.stage, full, leader_full, kt, a_row, w, M, N);
        cursor.advance();
      }
    }
    // Wait until the MMAs have read every slot we filled: then no commit can still arrive on our
    // empty barriers after the CTA (or its cluster) has moved on to teardown.
    for (int i = 0; i < Cfg::STAGES; ++i) {
      kt_hopper::mbarrier_wait(s.empty + 8 * cursor.stage, cursor.phase ^ 1u);
      cursor.advance();
    }
  }

  // The scale atoms of k-tile kt: A's 128 rows (this CTA's) and BN rows of each B (all of them,
  // in a pair too: each CTA's TMEM gets B's factors from its own shared memory), never
  // multicast. Rows of the maps: two per atom; atoms of 128 rows of group g follow its
  // predecessors' (boxes past a group's end read the next group's factors of B rows that TMA
  // zero-fills, or zeros past the last group).
  static __device__ __forceinline__ void load_scales(const SharedLayout& s,
                                                     const BlockScaleMaps& block_scales, int stage,
                                                     unsigned full, unsigned leader_full, int kt,
                                                     int a_row, const WorkTile& w, int M, int N) {
    const int row = kt * 2 * Cfg::K_STEPS;
    load<false>(s.sfa + stage * Cfg::SFA_STAGE_BYTES, block_scales.sfa, full, leader_full, 0, row,
                w.group * kt_sched::cdiv(M, 128) + a_row / 128);
#pragma unroll
    for (int b = 0; b < Cfg::NUM_B; ++b)
      load<false>(s.sfb + (b * Cfg::STAGES + stage) * Cfg::SFB_STAGE_BYTES,
                  b == 0 ? block_scales.sfb0 : block_scales.sfb1, full, leader_full, 0, row,
                  w.group * kt_sched::cdiv(N, 128) + w.n * Cfg::SFB_ATOMS);
  }

  // Copies ring slot `stage`'s scale atoms into their TMEM columns (the even CTA's thread; a
  // pair's copy fills both CTAs' TMEM). TMA wrote each B's atoms as [atom of rows][k step].
  static __device__ __forceinline__ void copy_scales(const SharedLayout& s, unsigned tmem_base,
                                                     int stage) {
#pragma unroll
    for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
      kt_blackwell::tmem_copy_scale_atom<Cfg::CTA_GROUP>(
          tmem_base + static_cast<unsigned>(Cfg::SFA_COLUMN + ks * Cfg::SCALE_ATOM_COLUMNS),
          kt_blackwell::smem_descriptor_scale_atom(s.sfa + stage * Cfg::SFA_STAGE_BYTES +
                                                   ks * Cfg::SCALE_ATOM_BYTES));
#pragma unroll
      for (int b = 0; b < Cfg::NUM_B; ++b)
#pragma unroll
        for (int j = 0; j < Cfg::SFB_ATOMS; ++j)
          kt_blackwell::tmem_copy_scale_atom<Cfg::CTA_GROUP>(
              tmem_base + static_cast<unsigned>(sfb_column(b, ks) + j * Cfg::SCALE_ATOM_COLUMNS),
              kt_blackwell::smem_descriptor_scale_atom(
                  s.sfb + (b * Cfg::STAGES + stage) * Cfg::SFB_STAGE_BYTES +
                  (j * Cfg::K_STEPS + ks) * Cfg::SCALE_ATOM_BYTES));
    }
  }

  // First TMEM column of B operand b's factors for k step ks (SFB_ATOMS atoms side by side: the
  // MMA reads rows 128j.. of B from the j-th 4 columns).
  static __device__ __forceinline__ int sfb_column(int b, int ks) {
    return Cfg::SFB_COLUMN + (b * Cfg::K_STEPS + ks) * Cfg::SFB_ATOMS * Cfg::SCALE_ATOM_COLUMNS;
  }

  // Arrival that frees ring slot `stage` once the MMAs issued so far have read it: on our empty
  // barrier and, where other CTAs' copies fed this MMA's operands, on theirs.
  static __device__ __forceinline__ void commit_stage(const SharedLayout& s, int stage) {
    if constexpr (Cfg::CLUSTER_SIZE > 1) {
      kt_blackwell::umma_commit_multicast<Cfg::CTA_GROUP>(s.empty + 8 * stage, kClusterMask);
    } else {
      kt_blackwell::umma_commit<Cfg::CTA_GROUP>(s.empty + 8 * stage);
    }
  }

  // The single MMA-issuing thread (of the even CTA of a pair).
  static __device__ __forceinline__ void issue_mma(const SharedLayout& s,
                                                   const Scheduler& scheduler, unsigned tmem_base,
                                                   int k_tiles) {
    // Descriptors of stage 0, k step 0; a stage, panel or k step only moves the start address
    // (the low field, in 16-byte units), so it is added to the 64-bit value.
    const unsigned long long a_desc0 = kt_blackwell::smem_descriptor_sw128(s.a);
    const unsigned long long b_desc0 = kt_blackwell::smem_descriptor_sw128(s.b);
    RingCursor<Cfg::STAGES> cursor;
    RingCursor<Cfg::ACC_STAGES> acc;
    for (int u = scheduler.first; u < scheduler.total; u += scheduler.stride) {
      kt_hopper::mbarrier_wait(s.tmem_empty + 8 * acc.stage, acc.phase ^ 1u);
      kt_blackwell::fence_after_thread_sync();
      const unsigned d = tmem_base + static_cast<unsigned>(acc.stage * Cfg::ACC_COLUMNS);
      for (int i = 0; i < k_tiles; ++i) {
        kt_hopper::mbarrier_wait(s.full + 8 * cursor.stage, cursor.phase);
        kt_blackwell::fence_after_thread_sync();
        const unsigned long long a_stage = a_desc0 + ((cursor.stage * Cfg::A_STAGE_BYTES) >> 4);
        const unsigned long long b_stage = b_desc0 + ((cursor.stage * Cfg::B_STAGE_BYTES) >> 4);
        if constexpr (Cfg::BLOCK_SCALED) copy_scales(s, tmem_base, cursor.stage);
#pragma unroll
        for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
          // k step ks: panel ks/4, 32 bytes further per k16 inside the 128-byte swizzled row
          const int panel = ks / 4;
          const int k_bytes = (ks % 4) * 32;
          const unsigned long long a_desc = a_stage + ((panel * Cfg::A_PANEL_BYTES + k_bytes) >> 4);
          const int accumulate = (i > 0 || ks > 0) ? 1 : 0;
#pragma unroll
          for (int b = 0; b < Cfg::NUM_B; ++b) {
            const unsigned long long b_desc =
                b_stage +
                ((b * Cfg::STAGES * Cfg::B_STAGE_BYTES + panel * Cfg::B_PANEL_BYTES + k_bytes) >>
                 4);
            if constexpr (kNvfp4)
              kt_blackwell::umma_nvfp4_ss<Cfg::CTA_GROUP>(
                  d + static_cast<unsigned>(b * Cfg::BN), a_desc, b_desc, kIdesc,
                  tmem_base + static_cast<unsigned>(Cfg::SFA_COLUMN + ks * Cfg::SCALE_ATOM_COLUMNS),
                  tmem_base + static_cast<unsigned>(sfb_column(b, ks)), accumulate);
            else if constexpr (kFp8)
              kt_blackwell::umma_f8f6f4_ss<Cfg::CTA_GROUP>(d + static_cast<unsigned>(b * Cfg::BN),
                                                           a_desc, b_desc, kIdesc, accumulate);
            else
              kt_blackwell::umma_f16_ss<Cfg::CTA_GROUP>(d + static_cast<unsigned>(b * Cfg::BN),
                                                        a_desc, b_desc, kIdesc, accumulate);
          }
        }
        commit_stage(s, cursor.stage);
        cursor.advance();
      }
      // The tile's accumulators are complete once every MMA so far has finished: tell the
      // epilogue of each CTA that holds part of them.
      if constexpr (Cfg::CTA_GROUP == 2) {
        kt_blackwell::umma_commit_multicast<2>(s.tmem_full + 8 * acc.stage, kClusterMask);
      } else {
        kt_blackwell::umma_commit<1>(s.tmem_full + 8 * acc.stage);
      }
      acc.advance();
    }
  }

  // 16 output columns of this thread's row from the accumulator(s) at TMEM address `taddr`.
  static __device__ __forceinline__ void load_outputs(unsigned taddr, unsigned (&packed)[8],
                                                      float scale, float second_scale) {
    unsigned first[16];
    kt_blackwell::tmem_load_32x32b_x16(taddr, first);
    if constexpr (Cfg::NUM_B == 2) {
      unsigned second[16];
      kt_blackwell::tmem_load_32x32b_x16(taddr + Cfg::BN, second);
      kt_blackwell::tmem_load_wait(first);
      kt_blackwell::tmem_load_wait(second);
      if constexpr (kScaledOutput) {  // NVFP4: each GEMM has its own global scale
#pragma unroll
        for (int e = 0; e < 16; ++e) {
          first[e] = __float_as_uint(__uint_as_float(first[e]) * scale);
          second[e] = __float_as_uint(__uint_as_float(second[e]) * second_scale);
        }
      }
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        packed[e] = kt_mma::pack_rn(
            kt_silu::silu_mul(__uint_as_float(first[2 * e]), __uint_as_float(second[2 * e])),
            kt_silu::silu_mul(__uint_as_float(first[2 * e + 1]),
                              __uint_as_float(second[2 * e + 1])));
      }
    } else {
      kt_blackwell::tmem_load_wait(first);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        // Only fp8 and NVFP4 outputs are scaled: the 16-bit GEMM's epilogue stays as it was.
        packed[e] = kScaledOutput ? kt_mma::pack_rn(__uint_as_float(first[2 * e]) * scale,
                                                    __uint_as_float(first[2 * e + 1]) * scale)
                                  : kt_mma::pack_rn(__uint_as_float(first[2 * e]),
                                                    __uint_as_float(first[2 * e + 1]));
    }
  }

  // Epilogue warp: its 32 TMEM lanes (sub-partition `quarter`) are 32 consecutive rows of C.
  static __device__ __forceinline__ void drain(const SharedLayout& s, const ClusterPlace& place,
                                               const Scheduler& scheduler, unsigned tmem_base,
                                               elem_t* __restrict__ C, int M, int N, int quarter,
                                               int lane, float scale, float second_scale) {
    RingCursor<Cfg::ACC_STAGES> acc;
    for (int u = scheduler.first; u < scheduler.total; u += scheduler.stride) {
      const WorkTile w = scheduler.work(u);
      kt_hopper::mbarrier_wait(s.tmem_full + 8 * acc.stage, acc.phase);
      kt_blackwell::fence_after_thread_sync();
      const int row = w.m * Cfg::BM + place.half * Cfg::CTA_ROWS + quarter * 32 + lane;
      const bool store = scheduler.inside(w) && row < M;
      elem_t* row_ptr = C + (static_cast<long long>(w.group) * M + (store ? row : 0)) * N;
      const unsigned taddr =
          kt_blackwell::tmem_address(tmem_base, quarter * 32, acc.stage * Cfg::ACC_COLUMNS);
#pragma unroll 4
      for (int c = 0; c < Cfg::BN; c += 16) {
        unsigned packed[8];
        load_outputs(taddr + static_cast<unsigned>(c), packed, scale, second_scale);
        if (store) store_row_16(row_ptr, N, w.n * Cfg::BN + c, packed);
      }
      // Our TMEM reads are done: let the MMA issuer reuse this accumulator stage.
      kt_blackwell::fence_before_thread_sync();
      __syncwarp();
      if (lane == 0) {
        const unsigned bar = s.tmem_empty + 8 * acc.stage;
        if constexpr (Cfg::CTA_GROUP == 2) {  // the even CTA's barrier counts both halves
          kt_hopper::mbarrier_arrive_cluster(bar, place.leader_rank);
        } else {
          kt_hopper::mbarrier_arrive(bar);
        }
      }
      acc.advance();
    }
  }
};

}  // namespace kt_tcgen05
