// Global -> shared stage copies of the cp.async wgmma GEMM, for any K: rows of A and B are
// K elements apart, so their pitch is a multiple of 16 bytes only when K % 8 == 0. VEC picks the
// widest copy every row allows (the manifest passes the widest for the job's K):
//  16: one cp.async of 16 bytes per chunk (K % 8 == 0);
//   8 / 4: two / four cp.async.ca of 8 / 4 bytes (K % 4 == 0 / K % 2 == 0);
//   2: any K: each chunk's 16 bytes are read as the two aligned 16-byte words around them
//      (ld.global.nc, the second mostly an L1 hit of the neighbour's first), held in registers
//      across one main-loop iteration, then shifted into place and stored (st.shared).
// Every path writes zeros for rows past the matrix and for k >= K, into the 128B-swizzled
// [rows][64] layout (chunk c of row r at chunk c ^ (r % 8)) that wgmma's descriptors read.
#pragma once

#include "gemm_cp_async_config.cuh"
#include "mma_primitives.cuh"

namespace kt_cp_async {

using kt_mma::elem_t;

// The two operands of a stage as the loader sees them: the m-side matrix then the n-side one,
// each [rows][K], and the first rows this CTA takes from each.
struct Operands {
  const elem_t* m_side;
  const elem_t* n_side;
  int m_rows, n_rows;  // rows of each matrix
  int m_row0, n_row0;  // first row of this CTA's tile in each
  int K;
};

// 16-bit shift of a 32-byte window: the 16 bytes starting `shift` elements (0..7) into w[0..7],
// without indexing registers at run time (two select levels, then a funnel shift).
__device__ __forceinline__ void realign(const unsigned (&w)[8], int shift, unsigned (&out)[4]) {
  const int words = shift >> 1;
  unsigned v[6], u[5];
#pragma unroll
  for (int j = 0; j < 6; ++j) v[j] = (words & 2) ? w[j + 2] : w[j];
#pragma unroll
  for (int j = 0; j < 5; ++j) u[j] = (words & 1) ? v[j + 1] : v[j];
  const unsigned bits = (shift & 1) ? 16u : 0u;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    asm("shf.r.wrap.b32 %0, %1, %2, %3;\n" : "=r"(out[i]) : "r"(u[i]), "r"(u[i + 1]), "r"(bits));
}

__device__ __forceinline__ void load_nc_16(const void* src, unsigned& a, unsigned& b, unsigned& c,
                                           unsigned& d) {
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
               : "l"(src));
}

template <class Cfg>
struct StageLoader {
  // Registers of the VEC == 2 path: per pass the two aligned words around the chunk.
  struct Staged {
    unsigned w[Cfg::PASSES][8];
  };

  int first_row;  // this thread's row in pass 0
  int chunk;      // its 16-byte chunk of every row

  __device__ __forceinline__ StageLoader()
      : first_row(static_cast<int>(threadIdx.x) / 8), chunk(static_cast<int>(threadIdx.x) % 8) {}

  // Pass j covers stage rows first_row + j*ROWS_PER_PASS: all m-side or all n-side (the m side is
  // a whole number of passes), the last one possibly past the stage.
  static constexpr bool pass_is_m_side(int j) { return j * Cfg::ROWS_PER_PASS < Cfg::M_SIDE; }

  __device__ __forceinline__ bool pass_in_stage(int j) const {
    return Cfg::TILE_ROWS % Cfg::ROWS_PER_PASS == 0 ||
           first_row + j * Cfg::ROWS_PER_PASS < Cfg::TILE_ROWS;
  }

  // Global row of pass j, its matrix, and whether the row exists.
  __device__ __forceinline__ const elem_t* row_source(const Operands& op, int j,
                                                      bool& inside) const {
    const int row = first_row + j * Cfg::ROWS_PER_PASS;
    if (pass_is_m_side(j)) {
      const int g = op.m_row0 + row;
      inside = g < op.m_rows;
      return op.m_side + static_cast<long long>(g) * op.K;
    }
    const int g = op.n_row0 + row - Cfg::M_SIDE;
    inside = g < op.n_rows;
    return op.n_side + static_cast<long long>(g) * op.K;
  }

  __device__ __forceinline__ unsigned destination(unsigned stage, int j) const {
    const int row = first_row + j * Cfg::ROWS_PER_PASS;
    return stage + row * 128 + ((chunk ^ (row & 7)) << 4);
  }

  // cp.async paths (VEC >= 4): k-tile starting at k0 into `stage`.
  __device__ __forceinline__ void copy_async(const Operands& op, unsigned stage, int k0) const {
    constexpr int kCopies = 16 / Cfg::VEC;
    constexpr int kElems = Cfg::VEC / 2;
    const int k = k0 + chunk * 8;
#pragma unroll
    for (int j = 0; j < Cfg::PASSES; ++j) {
      if (!pass_in_stage(j)) break;
      bool inside;
      const elem_t* row = row_source(op, j, inside);
      const unsigned dst = destination(stage, j);
#pragma unroll
      for (int c = 0; c < kCopies; ++c) {
        const bool in = inside && k + c * kElems < op.K;  // K % kElems == 0: all or nothing
        const elem_t* src = in ? row + k + c * kElems : op.m_side;
        if constexpr (Cfg::VEC == 16) {
          kt_mma::cp_async_16(dst, src, in ? 16 : 0);
        } else {
          kt_mma::cp_async_ca<Cfg::VEC>(dst + c * Cfg::VEC, src, in ? Cfg::VEC : 0);
        }
      }
    }
  }

  // VEC == 2, first half: issue the loads of k-tile k0 into registers.
  __device__ __forceinline__ void fetch(const Operands& op, int k0, Staged& s) const {
    const int k = k0 + chunk * 8;
#pragma unroll
    for (int j = 0; j < Cfg::PASSES; ++j) {
#pragma unroll
      for (int i = 0; i < 8; ++i) s.w[j][i] = 0u;
      if (!pass_in_stage(j)) continue;
      bool inside;
      const elem_t* row = row_source(op, j, inside);
      if (!inside || k >= op.K) continue;
      // Words at and after the chunk's first element; none starts past the last row's end.
      const elem_t* end =
          (pass_is_m_side(j) ? op.m_side + static_cast<long long>(op.m_rows) * op.K
                             : op.n_side + static_cast<long long>(op.n_rows) * op.K);
      const unsigned long long first = reinterpret_cast<unsigned long long>(row + k);
      const unsigned long long aligned = first & ~15ull;
      const unsigned long long stop = reinterpret_cast<unsigned long long>(end);
      load_nc_16(reinterpret_cast<const void*>(aligned), s.w[j][0], s.w[j][1], s.w[j][2],
                 s.w[j][3]);
      if (aligned + 16 < stop)
        load_nc_16(reinterpret_cast<const void*>(aligned + 16), s.w[j][4], s.w[j][5], s.w[j][6],
                   s.w[j][7]);
    }
  }

  // VEC == 2, second half: shift the staged words into place, zero what lies past K or past the
  // matrix, and store them into `stage`.
  __device__ __forceinline__ void deposit(const Operands& op, unsigned stage, int k0,
                                          const Staged& s) const {
    const int k = k0 + chunk * 8;
#pragma unroll
    for (int j = 0; j < Cfg::PASSES; ++j) {
      if (!pass_in_stage(j)) break;
      bool inside;
      const elem_t* row = row_source(op, j, inside);
      const int valid = inside ? (op.K - k < 0 ? 0 : (op.K - k > 8 ? 8 : op.K - k)) : 0;
      const int shift =
          static_cast<int>((reinterpret_cast<unsigned long long>(row + k) & 15u) >> 1);
      unsigned out[4];
      realign(s.w[j], shift, out);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        // Elements 2i and 2i+1 of the chunk are kept while below `valid`.
        const unsigned keep = valid > 2 * i + 1 ? 0xFFFFFFFFu : (valid > 2 * i ? 0x0000FFFFu : 0u);
        out[i] &= keep;
      }
      kt_mma::store_shared_16(destination(stage, j), out[0], out[1], out[2], out[3]);
    }
  }
};

}  // namespace kt_cp_async
