// Data movement of the skinny GEMM: global -> swizzled shared tiles of any row count (cp.async,
// or element loads when K rows are not 16-byte aligned), and the thread-block-cluster operations
// that sum the K slices of a tile through distributed shared memory (sm_90+; the cluster rank,
// barrier and address mapping come from hopper_primitives.cuh, the 16-byte remote load is here).
#pragma once

#include "gemm_skinny_config.cuh"
#include "gemm_tile_io.cuh"
#include "hopper_primitives.cuh"
#include "mma_primitives.cuh"

namespace kt_skinny {

using kt_mma::elem_t;

// Copies rows [row0, row0+ROWS) x k [k0, k0+BK) of a K-contiguous [rows][K] matrix into a
// swizzled [ROWS][BK] shared tile (kt_gemm::tile_offset); everything outside becomes zero (a
// zero-byte cp.async reads nothing). Thread t copies chunk t % (BK/8) of rows
// t / (BK/8) + j * ROWS_PER_PASS; a tile shorter than one pass leaves the last threads idle.
template <class Cfg, int ROWS>
__device__ __forceinline__ void load_tile(unsigned smem_tile, const elem_t* __restrict__ g,
                                          int rows, int K, int row0, int k0, bool aligned) {
  constexpr int kPasses = (ROWS + Cfg::ROWS_PER_PASS - 1) / Cfg::ROWS_PER_PASS;
  constexpr unsigned kPassBytes = Cfg::ROWS_PER_PASS * Cfg::BK * 2;
  const int first_row = static_cast<int>(threadIdx.x) / Cfg::CHUNKS_PER_ROW;
  const int k = (static_cast<int>(threadIdx.x) % Cfg::CHUNKS_PER_ROW) * 8;
  if (ROWS % Cfg::ROWS_PER_PASS != 0 && first_row >= ROWS) return;
  const unsigned dst = smem_tile + kt_gemm::tile_offset<Cfg::BK>(first_row, k);
  const int rows_left = kt_gemm::opaque(rows - row0 - first_row);  // pass j inside iff j*RPP < it
  const int gk = k0 + k;
  if (aligned) {
    const bool k_inside = gk < K;  // K % 8 == 0: then the whole chunk is inside
    const elem_t* src = kt_gemm::opaque(g + static_cast<long long>(row0 + first_row) * K + gk);
    const long long pass_stride = kt_gemm::opaque(static_cast<long long>(Cfg::ROWS_PER_PASS) * K);
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      if (ROWS % Cfg::ROWS_PER_PASS != 0 && first_row + j * Cfg::ROWS_PER_PASS >= ROWS) break;
      const bool inside = k_inside && j * Cfg::ROWS_PER_PASS < rows_left;
      kt_mma::cp_async_16(dst + j * kPassBytes, inside ? src + j * pass_stride : g,
                          inside ? 16 : 0);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      if (ROWS % Cfg::ROWS_PER_PASS != 0 && first_row + j * Cfg::ROWS_PER_PASS >= ROWS) break;
      unsigned words[4] = {0u, 0u, 0u, 0u};
      if (j * Cfg::ROWS_PER_PASS < rows_left) {
        const elem_t* src =
            g + static_cast<long long>(row0 + first_row + j * Cfg::ROWS_PER_PASS) * K;
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (gk + e < K) words[e / 2] |= static_cast<unsigned>(src[gk + e]) << (16 * (e % 2));
        }
      }
      kt_mma::store_shared_16(dst + j * kPassBytes, words[0], words[1], words[2], words[3]);
    }
  }
}

struct Quad {
  float x, y, z, w;
};

__device__ __forceinline__ void store_shared_f32(unsigned smem_dst, float value) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(smem_dst), "f"(value) : "memory");
}

__device__ __forceinline__ Quad load_shared_quad(unsigned smem_src) {
  Quad q;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w)
               : "r"(smem_src)
               : "memory");
  return q;
}

__device__ __forceinline__ void store_shared_quad(unsigned smem_dst, const Quad& q) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_dst), "f"(q.x), "f"(q.y),
               "f"(q.z), "f"(q.w)
               : "memory");
}

// A quad of another block's shared memory; the address comes from kt_hopper::map_shared_rank.
__device__ __forceinline__ Quad load_cluster_quad(unsigned cluster_address) {
  Quad q;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w)
               : "r"(cluster_address)
               : "memory");
  return q;
}

// Writes C[row][col..col+3] (those inside), rounded to the 16-bit type; one 8-byte store when
// the four are inside and 8-byte aligned (N % 4 == 0 and col % 4 == 0).
__device__ __forceinline__ void store_quad(elem_t* __restrict__ C, int N, int row, int col,
                                           const Quad& v) {
  elem_t* dst = C + static_cast<long long>(row) * N + col;
  if ((N % 4) == 0 && col + 3 < N) {
    const unsigned lo = kt_mma::pack_rn(v.x, v.y), hi = kt_mma::pack_rn(v.z, v.w);
    asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(dst), "r"(lo), "r"(hi) : "memory");
  } else {
    const float values[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (col + e < N) dst[e] = kt_mma::convert_rn(values[e]);
  }
}

}  // namespace kt_skinny
