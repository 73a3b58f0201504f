// Reference for the dual_gemm_silu family: plain fp32 arithmetic, one output element per thread,
// C_g[m,n] = silu(sum_k A_g[m,k] B1_g[n,k]) * sum_k A_g[m,k] B2_g[n,k], written as fp32. Tiles of
// A, B1 and B2 pass through shared memory only so that a full-size check takes milliseconds, not
// seconds; the arithmetic is the obvious one (fp32 products summed in k order, exact expf).
//
// Launch: grid (cdiv(N,16), cdiv(M,16), G), block (16, 16, 1), no dynamic shared memory.

#if defined(KT_DTYPE_BF16) == defined(KT_DTYPE_FP16)
#error "define exactly one of KT_DTYPE_BF16 and KT_DTYPE_FP16"
#endif

namespace kt_dual_reference {

constexpr int kTile = 16;   // output rows and columns per block
constexpr int kDepth = 32;  // k elements staged per step

__device__ __forceinline__ float to_float(unsigned short bits) {
#if defined(KT_DTYPE_BF16)
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
#else
  float value;
  asm("cvt.f32.f16 %0, %1;\n" : "=f"(value) : "h"(bits));
  return value;
#endif
}

// Element (row, k) of a [rows][K] matrix, zero outside it.
__device__ __forceinline__ float element(const unsigned short* matrix, int rows, int K, int row,
                                         int k) {
  return row < rows && k < K ? to_float(matrix[static_cast<long long>(row) * K + k]) : 0.0f;
}

}  // namespace kt_dual_reference

extern "C" __global__ void __launch_bounds__(256)
    kt_dual_gemm_silu_reference(float* __restrict__ out, const unsigned short* __restrict__ A,
                                const unsigned short* __restrict__ B1,
                                const unsigned short* __restrict__ B2, int G, int M, int N, int K) {
  using namespace kt_dual_reference;
  __shared__ float a_tile[kTile][kDepth + 1];
  __shared__ float b1_tile[kTile][kDepth + 1];
  __shared__ float b2_tile[kTile][kDepth + 1];
  const int g = static_cast<int>(blockIdx.z);
  if (g >= G) return;
  const unsigned short* A_g = A + static_cast<long long>(g) * M * K;
  const unsigned short* B1_g = B1 + static_cast<long long>(g) * N * K;
  const unsigned short* B2_g = B2 + static_cast<long long>(g) * N * K;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int m0 = static_cast<int>(blockIdx.y) * kTile, n0 = static_cast<int>(blockIdx.x) * kTile;
  const int thread = ty * kTile + tx;
  float gate = 0.0f, up = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = thread; i < kTile * kDepth; i += kTile * kTile) {
      const int r = i / kDepth, k = i % kDepth;
      a_tile[r][k] = element(A_g, M, K, m0 + r, k0 + k);
      b1_tile[r][k] = element(B1_g, N, K, n0 + r, k0 + k);
      b2_tile[r][k] = element(B2_g, N, K, n0 + r, k0 + k);
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k) {
      gate += a_tile[ty][k] * b1_tile[tx][k];
      up += a_tile[ty][k] * b2_tile[tx][k];
    }
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m < M && n < N)
    out[(static_cast<long long>(g) * M + m) * N + n] = gate / (1.0f + expf(-gate)) * up;
}
