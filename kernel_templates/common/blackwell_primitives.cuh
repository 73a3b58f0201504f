// Blackwell (sm_100a) tensor-core building blocks as inline PTX, so templates compile with NVRTC
// and no host header: tensor memory (TMEM) allocation, tcgen05.mma with both operands in shared
// memory and the accumulator in TMEM, its commit to an mbarrier, tcgen05.ld for epilogues, the
// tcgen05 thread-sync fences, the CTA-pair ("cta_group::2") TMA load, and the sm_100 shared-memory
// and instruction descriptors. mbarriers, plain TMA and cluster helpers are hopper_primitives.cuh
// (valid on sm_100 too).
//
// CTA groups: with kCtaGroup == 2 two CTAs of a cluster (ranks 2i and 2i+1, "peers") run one MMA
// of twice the rows: each holds its half of A and half of B in shared memory and its half of the
// accumulator rows in its own TMEM; the even CTA issues the MMAs. PTX requires every tcgen05
// instruction of a kernel to use the same cta_group, so all wrappers take it as a parameter.
//
// Bit layouts (PTX ISA 8.6+, "tcgen05 matrix descriptors" / "instruction descriptor"):
//   shared-memory descriptor (64 bit): [0,14) start address >> 4, [16,30) leading byte offset >> 4,
//     [32,46) stride byte offset >> 4, [46,48) version = 1 (sm_100), [49,52) base offset,
//     [52] LBO mode, [61,64) layout: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B.
//   instruction descriptor, kind::f16 (32 bit): [4,6) D format (1 = f32), [7,10) A format and
//     [10,13) B format (0 = f16, 1 = bf16), [13] negate A, [14] negate B, [15] A MN-major,
//     [16] B MN-major, [17,23) N >> 3, [24,29) M >> 4.
#pragma once

#include "hopper_primitives.cuh"

namespace kt_blackwell {

// ---- descriptors (plain arithmetic: usable on the host pass too) ----------------------------

// K-major operand tile of 64 16-bit elements per row (128-byte rows, the layout TMA writes with
// 128B swizzle), 8-row core-matrix groups 1024 bytes apart. The tile base must be 1024-byte
// aligned (base offset 0); stepping K inside the 128-byte row adds bytes>>4 to the low field.
__device__ __forceinline__ unsigned long long smem_descriptor_sw128(unsigned smem_address) {
  unsigned long long desc = 0;
  desc |= static_cast<unsigned long long>((smem_address & 0x3FFFF) >> 4);  // start address
  desc |= static_cast<unsigned long long>(1) << 16;  // leading offset: unused for swizzled K-major
  desc |= static_cast<unsigned long long>(1024 >> 4) << 32;  // stride offset: 8 rows x 128 B
  desc |= static_cast<unsigned long long>(1) << 46;          // descriptor version of sm_100
  desc |= static_cast<unsigned long long>(2) << 61;          // 128-byte swizzle
  return desc;
}

// kind::f16 instruction descriptor: fp32 accumulator, A and B K-major 16-bit (bf16 or fp16),
// MMA shape M x N (M = rows of the whole CTA group).
template <int M, int N, bool kBf16>
struct InstructionDescriptor {
  static_assert(M == 64 || M == 128 || M == 256, "tcgen05.mma kind::f16: M is 64, 128 or 256");
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "tcgen05.mma kind::f16: N is 8..256, N % 8 == 0");
  static constexpr unsigned kFormat = kBf16 ? 1u : 0u;
  static constexpr unsigned value = (1u << 4) | (kFormat << 7) | (kFormat << 10) |
                                    (static_cast<unsigned>(N >> 3) << 17) |
                                    (static_cast<unsigned>(M >> 4) << 24);
};

// kind::f8f6f4 instruction descriptor: fp32 accumulator, A and B K-major fp8 (format 0 = e4m3,
// 1 = e5m2 in the same A and B fields), MMA shape M x N.
template <int M, int N, unsigned kAFormat, unsigned kBFormat>
struct InstructionDescriptorF8 {
  static_assert(M == 64 || M == 128 || M == 256, "tcgen05.mma kind::f8f6f4: M is 64, 128 or 256");
  static_assert(N % 8 == 0 && N >= 8 && N <= 256,
                "tcgen05.mma kind::f8f6f4: N is 8..256, N % 8 == 0");
  static_assert(kAFormat <= 1 && kBFormat <= 1, "fp8 formats: 0 e4m3, 1 e5m2");
  static constexpr unsigned value = (1u << 4) | (kAFormat << 7) | (kBFormat << 10) |
                                    (static_cast<unsigned>(N >> 3) << 17) |
                                    (static_cast<unsigned>(M >> 4) << 24);
};

// kind::mxf4nvf4 instruction descriptor (block-scaled MMAs have their own layout): A and B
// K-major e2m1 (format 1 of this kind), ue4m3 scale factors (bit 23 = 0), scale-factor ids 0
// (bits 4-5 of B's, 29-30 of A's: the scales start at byte 0 of their TMEM columns), dense K = 64;
// the accumulator is always fp32 (no D-format field).
template <int M, int N>
struct InstructionDescriptorNvfp4 {
  static_assert(M == 128 || M == 256, "tcgen05.mma kind::mxf4nvf4: M is 128 (1 CTA) or 256 (pair)");
  static_assert(N % 8 == 0 && N >= 8 && N <= 256,
                "tcgen05.mma kind::mxf4nvf4: N is 8..256, N % 8 == 0");
  static constexpr unsigned kE2m1 = 1;
  static constexpr unsigned value = (kE2m1 << 7) | (kE2m1 << 10) |
                                    (static_cast<unsigned>(N >> 3) << 17) |
                                    (static_cast<unsigned>(M >> 4) << 24);
};

// Source of tcgen05.cp .32x128b: 32 rows of 16 bytes, dense (one 512-byte scale-factor atom, no
// swizzle), so 8-row core-matrix groups are 128 bytes apart (stride offset) and there is one
// 16-byte column only (no leading offset).
__device__ __forceinline__ unsigned long long smem_descriptor_scale_atom(unsigned smem_address) {
  unsigned long long desc = 0;
  desc |= static_cast<unsigned long long>((smem_address & 0x3FFFF) >> 4);  // start address
  desc |= static_cast<unsigned long long>(128 >> 4) << 32;  // stride offset: 8 rows x 16 B
  desc |= static_cast<unsigned long long>(1) << 46;         // descriptor version of sm_100
  return desc;                                              // layout 0: no swizzle
}

// TMEM address of (lane, column): lane in bits 31..16, column in 15..0.
__device__ __forceinline__ unsigned tmem_address(unsigned base, int lane, int column) {
  return base + (static_cast<unsigned>(lane) << 16) + static_cast<unsigned>(column);
}

// Visible to the host pass too, which parses kernels but emits no device code.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM100_ALL)

// ---- tensor memory allocation (one whole warp; the same warp for every call) -----------------

// Allocates `columns` TMEM columns (a power of two, 32..512) of all 128 lanes and writes their
// base address to the shared word `slot`. With kCtaGroup == 2 a warp of each peer CTA runs it
// and both get the same address. Blocks while another CTA on the SM holds too many columns.
template <int kCtaGroup>
__device__ __forceinline__ void tmem_alloc(unsigned slot, unsigned columns) {
  if constexpr (kCtaGroup == 2) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot),
                 "r"(columns)
                 : "memory");
  } else {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot),
                 "r"(columns)
                 : "memory");
  }
}

// Gives up the right to allocate again, so CTAs waiting in tcgen05.alloc on this SM may proceed.
template <int kCtaGroup>
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  if constexpr (kCtaGroup == 2) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
  } else {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
  }
}

template <int kCtaGroup>
__device__ __forceinline__ void tmem_dealloc(unsigned base, unsigned columns) {
  if constexpr (kCtaGroup == 2) {
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(base), "r"(columns)
                 : "memory");
  } else {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(base), "r"(columns)
                 : "memory");
  }
}

// ---- ordering between tcgen05 operations and thread synchronisation --------------------------

// Before a barrier/mbarrier arrival that hands TMEM (or its results) to other threads.
__device__ __forceinline__ void fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

// After a barrier/mbarrier wait, before tcgen05 operations that depend on what it announced.
__device__ __forceinline__ void fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

// ---- MMA ---------------------------------------------------------------------------------------

// D[tmem] (+)= A[smem] * B[smem]^T for one K=16 step (kind::f16, fp32 D). Issued by one thread;
// `accumulate` = 0 overwrites D. Asynchronous: track completion with umma_commit.
template <int kCtaGroup>
__device__ __forceinline__ void umma_f16_ss(unsigned d_tmem, unsigned long long a_desc,
                                            unsigned long long b_desc, unsigned idesc,
                                            int accumulate) {
  if constexpr (kCtaGroup == 2) {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %4, 0;\n"
        "  tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  } else {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %4, 0;\n"
        "  tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  }
}

// The same for one K=32 step of fp8 operands (kind::f8f6f4, fp32 D).
template <int kCtaGroup>
__device__ __forceinline__ void umma_f8f6f4_ss(unsigned d_tmem, unsigned long long a_desc,
                                               unsigned long long b_desc, unsigned idesc,
                                               int accumulate) {
  if constexpr (kCtaGroup == 2) {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %4, 0;\n"
        "  tcgen05.mma.cta_group::2.kind::f8f6f4 [%0], %1, %2, %3, p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  } else {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %4, 0;\n"
        "  tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
        : "memory");
  }
}

// D[tmem] (+)= (A sfa)[smem] * (B sfb)[smem]^T for one K=64 step of packed e2m1 operands (32
// bytes of each row), every 16 k-elements of a row scaled by its ue4m3 factor read from TMEM
// (kind::mxf4nvf4, scale_vec::4X: one 32-bit column per row holds its 4 factors). fp32 D.
template <int kCtaGroup>
__device__ __forceinline__ void umma_nvfp4_ss(unsigned d_tmem, unsigned long long a_desc,
                                              unsigned long long b_desc, unsigned idesc,
                                              unsigned sfa_tmem, unsigned sfb_tmem,
                                              int accumulate) {
  if constexpr (kCtaGroup == 2) {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %6, 0;\n"
        "  tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X"
        " [%0], %1, %2, %3, [%4], [%5], p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(sfa_tmem), "r"(sfb_tmem), "r"(accumulate)
        : "memory");
  } else {
    asm volatile(
        "{ .reg .pred p;\n"
        "  setp.ne.b32 p, %6, 0;\n"
        "  tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X"
        " [%0], %1, %2, %3, [%4], [%5], p; }\n" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(sfa_tmem), "r"(sfb_tmem), "r"(accumulate)
        : "memory");
  }
}

// One 512-byte scale-factor atom (32 rows x 16 bytes in shared memory) into TMEM columns
// [taddr, taddr+4), replicated to all four 32-lane sub-partitions (.warpx4), as block-scaled MMAs
// want: lane r of column g then holds the 4 factors of row 32g+r. With kCtaGroup == 2 the even
// CTA issues it and each CTA of the pair gets the atom at the same offset of its own shared memory.
// Kernels reuse one set of scale columns every k-tile, counting on the tcgen05 operations of one
// thread running in issue order (CUTLASS's sm100 block-scaled mainloop does the same).
template <int kCtaGroup>
__device__ __forceinline__ void tmem_copy_scale_atom(unsigned taddr, unsigned long long s_desc) {
  if constexpr (kCtaGroup == 2) {
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(s_desc)
                 : "memory");
  } else {
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(taddr), "l"(s_desc)
                 : "memory");
  }
}

// One arrival on the mbarrier `bar` (of this CTA) once every tcgen05 operation this thread issued
// before has completed (implies tcgen05.fence::before_thread_sync).
template <int kCtaGroup>
__device__ __forceinline__ void umma_commit(unsigned bar) {
  if constexpr (kCtaGroup == 2) {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
        : "memory");
  } else {
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
        : "memory");
  }
}

// The same, arriving on the mbarrier at `bar`'s offset in every CTA of the cluster in `cta_mask`.
template <int kCtaGroup>
__device__ __forceinline__ void umma_commit_multicast(unsigned bar, unsigned short cta_mask) {
  if constexpr (kCtaGroup == 2) {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
        " [%0], %1;\n" ::"r"(bar),
        "h"(cta_mask)
        : "memory");
  } else {
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
        " [%0], %1;\n" ::"r"(bar),
        "h"(cta_mask)
        : "memory");
  }
}

// ---- TMEM -> registers -------------------------------------------------------------------------

// 16 consecutive 32-bit columns of 32 consecutive lanes: thread i of the warp gets lane
// (taddr's lane + i), columns taddr's column + 0..15. A warp may only read the 32 lanes of its
// sub-partition, 32 * (warp id % 4). Complete with tmem_load_wait(r) before using the values.
__device__ __forceinline__ void tmem_load_32x32b_x16(unsigned taddr, unsigned (&r)[16]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32"
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, [%16];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
        "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
        "=r"(r[14]), "=r"(r[15])
      : "r"(taddr)
      : "memory");
}

// Waits until this thread's tcgen05.ld have completed. The loaded registers pass through the
// statement, so the compiler cannot move a use of them above the wait (call it once per array;
// a second wait finds nothing pending).
__device__ __forceinline__ void tmem_load_wait(unsigned (&r)[16]) {
  asm volatile("tcgen05.wait::ld.sync.aligned;\n"
               : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]), "+r"(r[4]), "+r"(r[5]), "+r"(r[6]),
                 "+r"(r[7]), "+r"(r[8]), "+r"(r[9]), "+r"(r[10]), "+r"(r[11]), "+r"(r[12]),
                 "+r"(r[13]), "+r"(r[14]), "+r"(r[15])
               :
               : "memory");
}

// ---- CTA-pair TMA ------------------------------------------------------------------------------

// 3D box -> this CTA's shared `dst`, its bytes completed on `leader_bar`: the mbarrier of the even
// CTA of the pair, a shared::cluster address (kt_hopper::map_shared_rank), so that the MMA issuer
// of the pair sees both halves land on one barrier.
__device__ __forceinline__ void tma_load_3d_pair(unsigned dst, const KtTensorMap* map,
                                                 unsigned leader_bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(map), "r"(leader_bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

#endif  // __CUDA_ARCH_FEAT_SM100_ALL

}  // namespace kt_blackwell
