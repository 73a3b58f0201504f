// Epilogue pieces of a consumer warpgroup that owns a whole BM x BN wgmma tile (ping-pong GEMM):
//  - TMA store: the accumulators, rounded to 16 bits, go through a shared staging tile laid out
//    as [BN/64 panels][BM rows][64 columns] with the 128B swizzle (stmatrix, conflict-free), and
//    one thread stores each panel with a TMA tensor store, which clips rows and columns outside
//    C (ragged M and N need no checks; the row pitch N*2 must be a multiple of 16 bytes);
//  - fp32 partial tiles for stream-K: a tile's accumulators in fragment order (thread-major,
//    16-byte vectors), so a CTA that computed another part of the same tile can add them with
//    the same per-thread layout; independent of M and N, coalesced.
#pragma once

#include "hopper_primitives.cuh"
#include "mma_primitives.cuh"

namespace kt_pingpong {

// Writes one consumer's tile (acc[mb] = m64 block mb, wgmma layout) into the staging tile at
// shared address `stage` (1024-byte aligned). Matrices of one stmatrix.x4: n8 blocks j, j+1,
// each as rows 0-7 and 8-15 of the warp's 16 rows.
template <int BM, int BN>
__device__ __forceinline__ void stage_tile(const float (&acc)[BM / 64][BN / 2], unsigned stage) {
  static_assert(BN % 64 == 0, "BN % 64 == 0: the staging tile is whole 64-column panels");
  const int t = static_cast<int>(threadIdx.x) % 128;
  const int lane = t % 32;
  const int matrix = lane / 8;  // this lane gives a row address of matrix `matrix`
  const int row_in_block = (t / 32) * 16 + (matrix % 2) * 8 + lane % 8;
  const int block_offset = (matrix / 2) * 8;  // column offset of matrix 2, 3: the next n8 block
#pragma unroll
  for (int mb = 0; mb < BM / 64; ++mb) {
    const int row = mb * 64 + row_in_block;
    const unsigned row_address = stage + row * 128;
#pragma unroll
    for (int j = 0; j < BN / 8; j += 2) {
      const int col = j * 8 + block_offset;
      const int panel = col / 64;
      const int chunk = (col % 64) / 8;
      const unsigned address =
          row_address + panel * (BM * 128) + static_cast<unsigned>(((chunk ^ (row & 7)) * 16));
      const float* a = acc[mb];
      kt_hopper::stmatrix_x4(address, kt_mma::pack_rn(a[4 * j], a[4 * j + 1]),
                             kt_mma::pack_rn(a[4 * j + 2], a[4 * j + 3]),
                             kt_mma::pack_rn(a[4 * j + 4], a[4 * j + 5]),
                             kt_mma::pack_rn(a[4 * j + 6], a[4 * j + 7]));
    }
  }
}

// Thread 0 of the warpgroup: stores the staged tile to C at (row0, col0) panel by panel.
template <int BM, int BN>
__device__ __forceinline__ void store_staged_tile(const KtTensorMap* map_c, unsigned stage,
                                                  int row0, int col0) {
#pragma unroll
  for (int p = 0; p < BN / 64; ++p)
    kt_hopper::tma_store_2d(map_c, stage + p * (BM * 128), col0 + p * 64, row0);
  kt_hopper::bulk_commit_group();
}

__device__ __forceinline__ void store_global_f32x4(float* dst, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}

__device__ __forceinline__ void load_global_f32x4(const float* src, float& a, float& b, float& c,
                                                  float& d) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(src)
               : "memory");
}

// Partial tile of kAcc fp32 values per thread of a warpgroup: vector v of thread t at
// slot[(v * 128 + t) * 4].
template <int kAcc>
__device__ __forceinline__ void store_partial(const float* acc, float* __restrict__ slot) {
  static_assert(kAcc % 4 == 0, "accumulators move as 16-byte vectors");
  const int t = static_cast<int>(threadIdx.x) % 128;
#pragma unroll
  for (int v = 0; v < kAcc / 4; ++v)
    store_global_f32x4(slot + (v * 128 + t) * 4, acc[4 * v], acc[4 * v + 1], acc[4 * v + 2],
                       acc[4 * v + 3]);
}

template <int kAcc>
__device__ __forceinline__ void add_partial(float* acc, const float* __restrict__ slot) {
  const int t = static_cast<int>(threadIdx.x) % 128;
#pragma unroll
  for (int v = 0; v < kAcc / 4; ++v) {
    float a, b, c, d;
    load_global_f32x4(slot + (v * 128 + t) * 4, a, b, c, d);
    acc[4 * v] += a;
    acc[4 * v + 1] += b;
    acc[4 * v + 2] += c;
    acc[4 * v + 3] += d;
  }
}

}  // namespace kt_pingpong
