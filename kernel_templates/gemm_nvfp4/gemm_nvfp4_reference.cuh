// Reference for the gemm_nvfp4 family: the dequantized inputs multiplied in plain fp32, one output
// element per thread, C[m,n] = gsa gsb sum_k (A[m,k] sfa(m,k)) (B[n,k] sfb(n,k)), written as fp32.
// Every e2m1 value and ue4m3 factor is decoded exactly (nvfp4_block_scale.cuh), so each dequantized
// operand and each product of two is exact in fp32; only the k-ordered sum rounds. Tiles pass
// through shared memory only so that a full-size check takes milliseconds.
// kt_gemm_nvfp4_magnitude writes gsa gsb sum_k |A sfa| |B sfb|, the per-element bound's magnitude.
//
// Launch: grid (min(cdiv(N,16),65535), min(cdiv(M,16),65535), 1), block (16, 16, 1), no dynamic
// shared memory.

#include "nvfp4_block_scale.cuh"

namespace kt_nvfp4_reference {

constexpr int kTile = 16;
constexpr int kDepth = 32;

template <bool kMagnitude>
__device__ __forceinline__ void gemm_nvfp4_element_tile(
    int m0, int n0, float* __restrict__ out, const unsigned char* __restrict__ A,
    const unsigned char* __restrict__ B, const unsigned char* __restrict__ SFA,
    const unsigned char* __restrict__ SFB, const float* __restrict__ GSA,
    const float* __restrict__ GSB, int M, int N, int K) {
  __shared__ float a_tile[kTile][kDepth + 1];
  __shared__ float b_tile[kTile][kDepth + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int thread = ty * kTile + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = thread; i < kTile * kDepth; i += kTile * kTile) {
      const int r = i / kDepth, k = k0 + i % kDepth;
      a_tile[r][i % kDepth] = kt_nvfp4::dequantized(A, SFA, M, K, m0 + r, k);
      b_tile[r][i % kDepth] = kt_nvfp4::dequantized(B, SFB, N, K, n0 + r, k);
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k) {
      const float product = a_tile[ty][k] * b_tile[tx][k];
      sum += kMagnitude ? fabsf(product) : product;
    }
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  const float global_scale = GSA[0] * GSB[0];
  if (m < M && n < N)
    out[static_cast<long long>(m) * N + n] =
        (kMagnitude ? fabsf(global_scale) : global_scale) * sum;
}

// CUDA caps a grid's y extent at 65535 blocks, fewer than M = 2^20 needs at 16 rows a block: the
// launch clamps both extents and each block strides over the tiles.
template <bool kMagnitude>
__device__ __forceinline__ void gemm_nvfp4_element(
    float* __restrict__ out, const unsigned char* __restrict__ A,
    const unsigned char* __restrict__ B, const unsigned char* __restrict__ SFA,
    const unsigned char* __restrict__ SFB, const float* __restrict__ GSA,
    const float* __restrict__ GSB, int M, int N, int K) {
  for (int m0 = static_cast<int>(blockIdx.y) * kTile; m0 < M;
       m0 += static_cast<int>(gridDim.y) * kTile)
    for (int n0 = static_cast<int>(blockIdx.x) * kTile; n0 < N;
         n0 += static_cast<int>(gridDim.x) * kTile)
      gemm_nvfp4_element_tile<kMagnitude>(m0, n0, out, A, B, SFA, SFB, GSA, GSB, M, N, K);
}

}  // namespace kt_nvfp4_reference

extern "C" __global__ void __launch_bounds__(256)
    kt_gemm_nvfp4_reference(float* __restrict__ out, const unsigned char* __restrict__ A,
                            const unsigned char* __restrict__ B,
                            const unsigned char* __restrict__ SFA,
                            const unsigned char* __restrict__ SFB, const float* __restrict__ GSA,
                            const float* __restrict__ GSB, int M, int N, int K) {
  kt_nvfp4_reference::gemm_nvfp4_element<false>(out, A, B, SFA, SFB, GSA, GSB, M, N, K);
}

extern "C" __global__ void __launch_bounds__(256)
    kt_gemm_nvfp4_magnitude(float* __restrict__ out, const unsigned char* __restrict__ A,
                            const unsigned char* __restrict__ B,
                            const unsigned char* __restrict__ SFA,
                            const unsigned char* __restrict__ SFB, const float* __restrict__ GSA,
                            const float* __restrict__ GSB, int M, int N, int K) {
  kt_nvfp4_reference::gemm_nvfp4_element<true>(out, A, B, SFA, SFB, GSA, GSB, M, N, K);
}
