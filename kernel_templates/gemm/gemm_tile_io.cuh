// Moving GEMM tiles: global -> swizzled shared tiles (cp.async, or element loads when rows are not
// 16-byte aligned), shared -> mma fragments (ldmatrix), and fp32 results -> global.
#pragma once

#include "gemm_config.cuh"
#include "mma_primitives.cuh"

namespace kt_gemm {

using kt_mma::elem_t;

__device__ __forceinline__ int min_int(int a, int b) {
  return a < b ? a : b;
}

// Physical 16-byte chunk of logical chunk `chunk` in tile row `row`. Any 8 consecutive rows read
// at the same logical chunk (one ldmatrix 8x8 matrix) land in 8 distinct bank groups.
template <int kChunksPerRow>
__device__ __forceinline__ int swizzle_chunk(int row, int chunk) {
  if constexpr (kChunksPerRow >= 8) {
    return chunk ^ (row & 7);
  } else {
    return chunk ^ ((row / (8 / kChunksPerRow)) & (kChunksPerRow - 1));
  }
}

// Byte offset of element (row, k) of a [rows][BK] swizzled tile; k is a multiple of 8.
template <int BK>
__device__ __forceinline__ unsigned tile_offset(int row, int k) {
  return static_cast<unsigned>((row * BK + swizzle_chunk<BK / 8>(row, k / 8) * 8) * 2);
}

// The i-th k-tile this block visits among [begin, begin + count): the order changes only the
// fp32 summation order.
template <int kOrder>
__device__ __forceinline__ int k_tile_at(int i, int begin, int count) {
  if constexpr (kOrder == kReverse) {
    return begin + count - 1 - i;
  } else if constexpr (kOrder == kInterleaved) {
    const int evens = (count + 1) / 2;  // even-numbered tiles first, then the odd ones
    return begin + (i < evens ? 2 * i : 2 * (i - evens) + 1);
  } else {
    return begin + i;
  }
}

// Hides a value's origin from the optimizer, so that addresses derived from it are recomputed
// where they are used instead of being hoisted out of the k loop into one register each.
template <class T>
__device__ __forceinline__ T opaque(T value) {
  if constexpr (sizeof(T) == 8) {
    asm volatile("" : "+l"(value));
  } else {
    asm volatile("" : "+r"(value));
  }
  return value;
}

// Copies rows [row0, row0+ROWS) x k [k0, k0+BK) of a K-contiguous [rows][K] matrix into a
// swizzled shared tile; everything outside the matrix becomes zero. `aligned` (K % 8 == 0 and a
// 16-byte aligned base) selects cp.async; otherwise element loads and a synchronous store.
// Thread t copies chunk t % CHUNKS_PER_ROW of rows t / CHUNKS_PER_ROW + j * COPY_ROWS_PER_PASS.
template <class Cfg, int ROWS>
__device__ __forceinline__ void load_tile(unsigned smem_tile, const elem_t* __restrict__ g,
                                          int rows, int K, int row0, int k0, bool aligned) {
  constexpr int kPasses = ROWS / Cfg::COPY_ROWS_PER_PASS;
  constexpr unsigned kPassBytes = Cfg::COPY_ROWS_PER_PASS * Cfg::BK * 2;
  const int first_row = static_cast<int>(threadIdx.x) / Cfg::CHUNKS_PER_ROW;
  const int k = (static_cast<int>(threadIdx.x) % Cfg::CHUNKS_PER_ROW) * 8;
  // Every pass shifts the row by a multiple of 8, so the swizzle pattern stays the same.
  const unsigned dst = smem_tile + tile_offset<Cfg::BK>(first_row, k);
  const int rows_left = opaque(rows - row0 - first_row);  // pass j is inside iff j*RPP < this
  const int gk = k0 + k;
  if (aligned) {
    const bool k_inside = gk < K;  // K % 8 == 0: then the whole chunk is inside
    const elem_t* src = opaque(g + static_cast<long long>(row0 + first_row) * K + gk);
    const long long pass_stride = opaque(static_cast<long long>(Cfg::COPY_ROWS_PER_PASS) * K);
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      const bool inside = k_inside && j * Cfg::COPY_ROWS_PER_PASS < rows_left;
      kt_mma::cp_async_16(dst + j * kPassBytes, inside ? src + j * pass_stride : g,
                          inside ? 16 : 0);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      unsigned words[4] = {0u, 0u, 0u, 0u};
      if (j * Cfg::COPY_ROWS_PER_PASS < rows_left) {
        const elem_t* src =
            g + static_cast<long long>(row0 + first_row + j * Cfg::COPY_ROWS_PER_PASS) * K;
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (gk + e < K) words[e / 2] |= static_cast<unsigned>(src[gk + e]) << (16 * (e % 2));
        }
      }
      kt_mma::store_shared_16(dst + j * kPassBytes, words[0], words[1], words[2], words[3]);
    }
  }
}

// A warp's operands for one k16 step: MMA_M A tiles (16x16) and MMA_N B tiles (16x8).
template <class Cfg>
struct Fragments {
  unsigned a[Cfg::MMA_M][4];
  unsigned b[Cfg::MMA_N][2];
};

// Per-lane byte offsets, within the A and B tiles, of this lane's ldmatrix row for the warp's
// first m16 / n16 tile at k step 0. Because warp tiles start on 16-row boundaries and a k step
// covers logical chunks 2ks and 2ks+1, the offset for m-tile i (or n-pair p) at step ks is
// (offset ^ ks*32) + i*16*BK*2: one XOR per step, and the tile index folds into an immediate.
struct FragmentOffsets {
  unsigned a;
  unsigned b;
};

template <class Cfg>
__device__ __forceinline__ FragmentOffsets fragment_offsets(int lane, int warp_row, int warp_col) {
  // A matrices: rows 0-7|8-15 at k 0-7, then rows 0-7|8-15 at k 8-15 (= a0..a3).
  // B matrices: n 0-7 at k 0-7 | k 8-15, then n 8-15 at k 0-7 | k 8-15 (b0,b1 of two n8 tiles).
  return {tile_offset<Cfg::BK>(warp_row + lane % 16, (lane / 16) * 8),
          tile_offset<Cfg::BK>(warp_col + lane % 8 + (lane / 16) * 8, ((lane / 8) % 2) * 8)};
}

template <class Cfg>
__device__ __forceinline__ void load_fragments(Fragments<Cfg>& f, unsigned a_tile, unsigned b_tile,
                                               int ks, const FragmentOffsets& offsets) {
  constexpr unsigned kRows16 = 16 * Cfg::BK * 2;  // bytes of 16 tile rows
  const unsigned a_step = a_tile + (offsets.a ^ static_cast<unsigned>(ks * 32));
  const unsigned b_step = b_tile + (offsets.b ^ static_cast<unsigned>(ks * 32));
#pragma unroll
  for (int i = 0; i < Cfg::MMA_M; ++i) kt_mma::ldmatrix_x4(f.a[i], a_step + i * kRows16);
#pragma unroll
  for (int j = 0; j < Cfg::MMA_N; j += 2) {
    unsigned r[4];
    kt_mma::ldmatrix_x4(r, b_step + (j / 2) * kRows16);
    f.b[j][0] = r[0];
    f.b[j][1] = r[1];
    f.b[j + 1][0] = r[2];
    f.b[j + 1][1] = r[3];
  }
}

// Writes outputs (row, col) and (row, col+1), whichever are inside, rounded to the 16-bit type.
__device__ __forceinline__ void store_pair(elem_t* __restrict__ C, int M, int N, int row, int col,
                                           float v0, float v1) {
  if (row >= M || col >= N) return;
  elem_t* dst = C + static_cast<long long>(row) * N + col;
  if (col + 1 < N && (N % 2) == 0) {  // even N and even col: 4-byte aligned
    *reinterpret_cast<unsigned*>(dst) = kt_mma::pack_rn(v0, v1);
  } else {
    dst[0] = kt_mma::convert_rn(v0);
    if (col + 1 < N) dst[1] = kt_mma::convert_rn(v1);
  }
}

// The fp32 version for split-K partial tiles.
__device__ __forceinline__ void store_partial_pair(float* __restrict__ slice, int M, int N, int row,
                                                   int col, float v0, float v1) {
  if (row >= M || col >= N) return;
  float* dst = slice + static_cast<long long>(row) * N + col;
  dst[0] = v0;
  if (col + 1 < N) dst[1] = v1;
}

}  // namespace kt_gemm
