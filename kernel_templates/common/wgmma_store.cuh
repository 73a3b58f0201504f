// Epilogue store of wgmma kernels (the GEMM's, the dual GEMM's): one consumer warpgroup's fp32
// accumulators of an m64 block -> 16-bit C in global memory, with bounds checks for ragged M and N.
//
// A wgmma m64nN accumulator gives lane l of warp w the column pairs 8j + 2*(l%4) of rows
// 16w + l/4 (+8). Stored as is, a warp writes 8 rows x 16 bytes per instruction. Instead, each
// quad of lanes transposes its packed pairs of four consecutive n8 blocks, so that lane q of the
// quad owns 8 consecutive columns (16 bytes) of a 32-column strip: one 16-byte store per lane,
// 8 rows x 64 bytes per warp instruction.
#pragma once

#include "mma_primitives.cuh"

namespace kt_wgmma {

using kt_mma::elem_t;

// v[i] of `values` for a run-time i in 0..3, without indexing a register array at run time.
__device__ __forceinline__ unsigned pick(const unsigned (&values)[4], int i) {
  const unsigned low = (i & 1) ? values[1] : values[0];
  const unsigned high = (i & 1) ? values[3] : values[2];
  return (i & 2) ? high : low;
}

// Lane q of each quad holds packed[j] = its pair of block j (j = 0..3); afterwards out[p] is the
// pair that lane p held for block q, i.e. columns 8q + 2p, +1 of the strip.
__device__ __forceinline__ void quad_transpose(const unsigned (&packed)[4], unsigned (&out)[4],
                                               int q) {
  const unsigned own = pick(packed, q);
#pragma unroll
  for (int j = 0; j < 4; ++j) out[j] = own;  // slot q keeps it; the other three are replaced
#pragma unroll
  for (int s = 1; s < 4; ++s) {
    const int partner = q ^ s;  // sends its pair of block q, we send ours of block partner
    const unsigned received = __shfl_xor_sync(0xffffffffu, pick(packed, partner), s);
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = j == partner ? received : out[j];
  }
}

__device__ __forceinline__ void store_16(elem_t* dst, const unsigned (&w)[4]) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(w[0]), "r"(w[1]),
               "r"(w[2]), "r"(w[3])
               : "memory");
}

// Writes 8 columns [col, col+8) of `row`, whichever are inside C.
__device__ __forceinline__ void store_8(elem_t* __restrict__ C, int M, int N, int row, int col,
                                        const unsigned (&w)[4]) {
  if (row >= M || col >= N) return;
  elem_t* dst = C + static_cast<long long>(row) * N + col;
  if ((N % 8) == 0) {  // then col + 8 <= N too, and the address is 16-byte aligned
    store_16(dst, w);
    return;
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    if (col + e < N) dst[e] = static_cast<elem_t>(w[e / 2] >> (16 * (e % 2)));
  }
}

// Writes the pair (col, col+1) of `row`, whichever is inside C. For the trailing 16 columns of
// a tile whose width is not a multiple of 32 (BN = 176): no quad of four n8 blocks to transpose.
__device__ __forceinline__ void store_pair(elem_t* __restrict__ C, int M, int N, int row, int col,
                                           unsigned pair) {
  if (row >= M || col >= N) return;
  elem_t* dst = C + static_cast<long long>(row) * N + col;
  if ((N % 2) == 0) {  // then col + 2 <= N too (col is even), and the address 4-byte aligned
    asm volatile("st.global.b32 [%0], %1;\n" ::"l"(dst), "r"(pair) : "memory");
    return;
  }
  dst[0] = static_cast<elem_t>(pair);
  if (col + 1 < N) dst[1] = static_cast<elem_t>(pair >> 16);
}

// Stores one consumer warpgroup's accumulators of an m64 block: rows row_base + 0..63, columns
// col_base + 0..BN-1 of C.
template <int BN>
__device__ __forceinline__ void store_m64_block(const float (&acc)[BN / 2], elem_t* __restrict__ C,
                                                int M, int N, int row_base, int col_base) {
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int lane = t % 32;
  const int q = lane % 4;
  const int row0 = row_base + (t / 32) * 16 + lane / 4;
#pragma unroll
  for (int strip = 0; strip < BN / 32; ++strip) {
    const int col = col_base + strip * 32 + q * 8;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      unsigned packed[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int at = 4 * (strip * 4 + j) + 2 * half;
        packed[j] = kt_mma::pack_rn(acc[at], acc[at + 1]);
      }
      unsigned out[4];
      quad_transpose(packed, out, q);
      store_8(C, M, N, row0 + 8 * half, col, out);
    }
  }
  static_assert(BN % 16 == 0, "whole 32-column strips and at most one trailing 16-column half");
  if constexpr (BN % 32 != 0) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {  // the last two n8 blocks, each lane its own pair of columns
      const int block = (BN / 32) * 4 + j;
      const int col = col_base + 8 * block + 2 * q;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int at = 4 * block + 2 * half;
        store_pair(C, M, N, row0 + 8 * half, col, kt_mma::pack_rn(acc[at], acc[at + 1]));
      }
    }
  }
}

}  // namespace kt_wgmma
