// TMA-store epilogue of a consumer warpgroup that owns BM rows x BN columns of wgmma
// accumulators (m64 blocks): the accumulators, rounded to 16 bits, go through a shared staging
// tile laid out as [BN/64 panels][BM rows][64 columns] with the 128B swizzle (stmatrix,
// conflict-free), and one thread stores each panel with a TMA tensor store, which clips rows and
// columns outside C (ragged M and N need no checks; the row pitch N*2 must be a multiple of 16
// bytes; other N copy the staged tile with plain stores). Used by the ping-pong and the
// cooperative wgmma GEMMs.
#pragma once

#include "hopper_primitives.cuh"
#include "mma_primitives.cuh"

namespace kt_tma_store {

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

// The fallback for a C whose row pitch TMA cannot take (N % 8 != 0): the warpgroup copies the
// staged tile to C itself, one 16-byte chunk (8 columns) per thread and step, element by element
// inside C. Call after the staging writes are visible to the warpgroup (a barrier).
template <int BM, int BN>
__device__ __forceinline__ void copy_staged_tile(unsigned stage, kt_mma::elem_t* __restrict__ C,
                                                 int M, int N, int row0, int col0) {
  constexpr int kChunksPerRow = BN / 8;
#pragma unroll 1
  for (int i = static_cast<int>(threadIdx.x) % 128; i < BM * kChunksPerRow; i += 128) {
    const int row = i / kChunksPerRow;
    const int col = (i % kChunksPerRow) * 8;
    if (row0 + row >= M || col0 + col >= N) continue;
    const int chunk = (col % 64) / 8;
    const unsigned src = stage + (col / 64) * (BM * 128) + row * 128 +
                         static_cast<unsigned>((chunk ^ (row & 7)) * 16);
    unsigned w[4];
    kt_mma::load_shared_16(src, w);
    kt_mma::elem_t* dst = C + static_cast<long long>(row0 + row) * N + col0 + col;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (col0 + col + e < N) dst[e] = static_cast<kt_mma::elem_t>(w[e / 2] >> (16 * (e % 2)));
  }
}

}  // namespace kt_tma_store
