// C = A B on tensor cores through WMMA (nvcuda::wmma, 16x16x16 fp16 fragments, fp32 accumulators).
// Every tile size is a macro, so kerntune tunes them as axes: -DKT_BM, -DKT_BN, -DKT_FRAGS.
#include <cuda_fp16.h>
#include <mma.h>

#ifndef KT_BM
#define KT_BM 64
#endif
#ifndef KT_BN
#define KT_BN 64
#endif
#ifndef KT_FRAGS
#define KT_FRAGS 1
#endif

namespace {
constexpr int kWarpsAlongN = KT_BN / (16 * KT_FRAGS);
constexpr int kWarps = (KT_BM / 16) * kWarpsAlongN;
static_assert(KT_BN % (16 * KT_FRAGS) == 0, "a warp's strip must tile the block's columns");
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    wmma_gemm(float* c, const __half* a, const __half* b, int m, int n, int k) {
  using namespace nvcuda;
  const int warp = threadIdx.x / 32;
  const long long row = blockIdx.y * KT_BM + (warp / kWarpsAlongN) * 16;
  const long long first_col = blockIdx.x * KT_BN + (warp % kWarpsAlongN) * 16 * KT_FRAGS;
  if (row >= m) return;  // a whole warp leaves: the fragment calls below need all 32 lanes

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[KT_FRAGS];
  for (int f = 0; f < KT_FRAGS; ++f) wmma::fill_fragment(acc[f], 0.0f);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag;
  for (int kk = 0; kk < k; kk += 16) {
    wmma::load_matrix_sync(a_frag, a + row * k + kk, k);
    for (int f = 0; f < KT_FRAGS; ++f) {
      const long long col = first_col + 16 * f;
      if (col >= n) break;
      wmma::load_matrix_sync(b_frag, b + static_cast<long long>(kk) * n + col, n);
      wmma::mma_sync(acc[f], a_frag, b_frag, acc[f]);
    }
  }
  for (int f = 0; f < KT_FRAGS; ++f) {
    const long long col = first_col + 16 * f;
    if (col >= n) break;
    wmma::store_matrix_sync(c + row * n + col, acc[f], n, wmma::mem_row_major);
  }
}
