// Moving attention tiles for the mma.sync template: global [S][HEAD_DIM] rows -> XOR-swizzled
// shared tiles with cp.async (rows past the sequence become zeros), shared -> mma.sync fragments
// with ldmatrix, and a warp's finished output rows -> global through its own shared rows.
#pragma once

#include "mma_primitives.cuh"

namespace kt_attn {

// Byte offset of 16-byte chunk `chunk` of row `row` in a [rows][kHeadDim] tile. The 8 rows one
// ldmatrix matrix reads at the same logical chunk land in 8 distinct bank groups.
template <int kHeadDim>
__device__ __forceinline__ unsigned tile_offset(int row, int chunk) {
  return static_cast<unsigned>(row * kHeadDim * 2 + ((chunk ^ (row & 7)) * 16));
}

// Rows [row0, row0 + ROWS) of one head's [S][HEAD_DIM] matrix into a swizzled tile; rows at or
// past seq_len are zero-filled without reading global memory. The caller commits the cp.async
// group (it decides how copies are grouped).
template <class Cfg, int ROWS>
__device__ __forceinline__ void load_rows(unsigned tile, const kt_mma::elem_t* __restrict__ head,
                                          int row0, int seq_len) {
  constexpr int kPasses = ROWS * Cfg::CHUNKS_PER_ROW / Cfg::THREADS;
  constexpr int kRowsPerPass = Cfg::THREADS / Cfg::CHUNKS_PER_ROW;
  const int chunk = static_cast<int>(threadIdx.x) % Cfg::CHUNKS_PER_ROW;
  const int first = static_cast<int>(threadIdx.x) / Cfg::CHUNKS_PER_ROW;
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int row = first + i * kRowsPerPass;
    const int global_row = row0 + row;
    const bool inside = global_row < seq_len;
    const kt_mma::elem_t* src =
        head + static_cast<long long>(inside ? global_row : 0) * Cfg::HEAD_DIM + chunk * 8;
    kt_mma::cp_async_16(tile + tile_offset<Cfg::HEAD_DIM>(row, chunk), src, inside ? 16 : 0);
  }
}

// A fragment (m16k16) of rows [row0, row0 + 16), columns [16 ks, 16 ks + 16) of a row-major tile.
template <int kHeadDim>
__device__ __forceinline__ void load_a_fragment(unsigned (&a)[4], unsigned tile, int row0, int ks,
                                                int lane) {
  const int row = row0 + (lane % 8) + ((lane / 8) % 2) * 8;
  kt_mma::ldmatrix_x4(a, tile + tile_offset<kHeadDim>(row, 2 * ks + lane / 16));
}

// B fragments of two n8 blocks for S = Q Kᵀ: K rows [n0, n0 + 16) (the n side), head-dim
// columns [16 ks, +16) (the k side). b[0], b[1]: block n0; b[2], b[3]: block n0 + 8.
template <int kHeadDim>
__device__ __forceinline__ void load_k_fragments(unsigned (&b)[4], unsigned tile, int n0, int ks,
                                                 int lane) {
  const int row = n0 + (lane % 8) + (lane / 16) * 8;
  kt_mma::ldmatrix_x4(b, tile + tile_offset<kHeadDim>(row, 2 * ks + (lane / 8) % 2));
}

// B fragments of two n8 blocks for O += P V: V rows (keys, the k side) [16 t, +16), head-dim
// columns (the n side) [16 dp, +16), transposed by ldmatrix. b[0], b[1]: columns 16 dp..+8;
// b[2], b[3]: columns 16 dp + 8..+16.
template <int kHeadDim>
__device__ __forceinline__ void load_v_fragments(unsigned (&b)[4], unsigned tile, int t, int dp,
                                                 int lane) {
  const int row = 16 * t + (lane % 8) + ((lane / 8) % 2) * 8;
  kt_mma::ldmatrix_x4_trans(b, tile + tile_offset<kHeadDim>(row, 2 * dp + lane / 16));
}

// Writes a warp's normalised output (D8 n8 blocks per m16 tile, accumulator layout) as 16-bit
// values into its own rows [row0, row0 + 16 M_TILES) of a swizzled tile, then copies the rows
// below seq_len to global memory 16 bytes per lane. The warp must be the only user of those rows.
template <int kHeadDim, int kMTiles>
__device__ __forceinline__ void store_warp_rows(const float (&o)[kMTiles][kHeadDim / 2],
                                                const float (&inverse)[kMTiles][2], unsigned tile,
                                                int row0, kt_mma::elem_t* __restrict__ out_head,
                                                int global_row0, int seq_len, int lane) {
  constexpr int kD8 = kHeadDim / 8;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * mt + lane / 4 + 8 * h;
#pragma unroll
      for (int j = 0; j < kD8; ++j) {
        const unsigned packed = kt_mma::pack_rn(o[mt][4 * j + 2 * h] * inverse[mt][h],
                                                o[mt][4 * j + 2 * h + 1] * inverse[mt][h]);
        kt_mma::store_shared_4(tile + tile_offset<kHeadDim>(row, j) + (lane % 4) * 4, packed);
      }
    }
  __syncwarp();
  constexpr int kChunks = kMTiles * 16 * kD8;
  static_assert(kChunks % 32 == 0, "whole passes of 32 lanes");
#pragma unroll
  for (int i = 0; i < kChunks / 32; ++i) {
    const int index = lane + 32 * i;
    const int row = index / kD8;
    const int chunk = index % kD8;
    if (global_row0 + row >= seq_len) continue;
    unsigned w[4];
    kt_mma::load_shared_16(tile + tile_offset<kHeadDim>(row0 + row, chunk), w);
    kt_mma::store_global_16(
        out_head + static_cast<long long>(global_row0 + row) * kHeadDim + chunk * 8, w[0], w[1],
        w[2], w[3]);
  }
}

}  // namespace kt_attn
