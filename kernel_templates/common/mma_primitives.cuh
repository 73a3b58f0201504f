// Warp-level building blocks for sm_80+ tensor-core kernels, as inline PTX so a family compiles
// with NVRTC and no host header: shared-memory addresses, cp.async, ldmatrix (plain and
// transposed), mma.sync m16n8k16, conversions between fp32 and the 16-bit element type, and the
// fast base-2 exponential. Elements are raw 16-bit values (unsigned short).
#pragma once

#if defined(KT_DTYPE_BF16) == defined(KT_DTYPE_FP16)
#error "define exactly one of KT_DTYPE_BF16 and KT_DTYPE_FP16"
#endif

namespace kt_mma {

using elem_t = unsigned short;  // one bf16 or fp16 value, bit pattern only

// 32-bit shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_address(const void* pointer) {
  unsigned address;
  asm volatile(
      "{ .reg .u64 generic;\n"
      "  cvta.to.shared.u64 generic, %1;\n"
      "  cvt.u32.u64 %0, generic; }\n"
      : "=r"(address)
      : "l"(pointer));
  return address;
}

// 16-byte global -> shared copy that bypasses L1. src_bytes < 16 zero-fills the rest, so
// src_bytes = 0 writes 16 zero bytes without reading global memory.
__device__ __forceinline__ void cp_async_16(unsigned smem_dst, const void* global_src,
                                            int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst), "l"(global_src),
               "r"(src_bytes)
               : "memory");
}

// 4- or 8-byte global -> shared copy through L1 (cp.async.cg takes only 16 bytes), for rows whose
// pitch is not a multiple of 16 bytes. src_bytes = 0 writes zeros without reading.
template <int kBytes>
__device__ __forceinline__ void cp_async_ca(unsigned smem_dst, const void* global_src,
                                            int src_bytes) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_dst), "l"(global_src),
               "n"(kBytes), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void store_shared_16(unsigned smem_dst, unsigned w0, unsigned w1,
                                                unsigned w2, unsigned w3) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_dst), "r"(w0), "r"(w1),
               "r"(w2), "r"(w3)
               : "memory");
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, and register i of
// every lane receives its share of matrix i (row lane/4, columns 2*(lane%4) and +1).
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned smem_src) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_src));
}

// The same four matrices transposed on the way: register i of lane l receives column l/4, rows
// 2*(l%4) and +1 of matrix i. For a B operand stored [k][n] (n contiguous), this is the "col"
// fragment mma.sync wants.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned smem_src) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_src));
}

// D = A * B + D for one 16x8x16 tile: A row-major 16x16 (4 regs), B "col" 16x8 (2 regs), fp32 D.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4],
                                          const unsigned (&b)[2]) {
#if defined(KT_DTYPE_BF16)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Two floats -> two 16-bit values, round to nearest even; lo lands at the lower address.
__device__ __forceinline__ unsigned pack_rn(float lo, float hi) {
  unsigned packed;
#if defined(KT_DTYPE_BF16)
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
#endif
  return packed;
}

__device__ __forceinline__ elem_t convert_rn(float value) {
  elem_t out;
#if defined(KT_DTYPE_BF16)
  asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(out) : "f"(value));
#else
  asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(out) : "f"(value));
#endif
  return out;
}

// One 16-bit element as fp32 (exact for both types).
__device__ __forceinline__ float to_float(elem_t value) {
#if defined(KT_DTYPE_BF16)
  return __uint_as_float(static_cast<unsigned>(value) << 16);
#else
  float out;
  asm("cvt.f32.f16 %0, %1;\n" : "=f"(out) : "h"(value));
  return out;
#endif
}

// 2^x with the hardware approximation (about 2 ulp); 2^-inf = 0, which masked scores rely on.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ void store_global_16(void* dst, unsigned w0, unsigned w1, unsigned w2,
                                                unsigned w3) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(w0), "r"(w1), "r"(w2),
               "r"(w3)
               : "memory");
}

__device__ __forceinline__ void load_shared_16(unsigned smem_src, unsigned (&w)[4]) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
               : "r"(smem_src));
}

__device__ __forceinline__ void store_shared_4(unsigned smem_dst, unsigned w) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(smem_dst), "r"(w) : "memory");
}

// L2-coherent load (skips L1, which may hold stale lines of data other SMs wrote).
__device__ __forceinline__ float load_global_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
  return v;
}

}  // namespace kt_mma
