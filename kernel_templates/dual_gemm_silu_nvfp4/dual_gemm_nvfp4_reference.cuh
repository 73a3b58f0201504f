// Reference for the dual_gemm_silu_nvfp4 family: plain fp32 arithmetic on exactly dequantized
// operands (nvfp4_block_scale.cuh), one output element per thread, C_g[m,n] = silu(gate) * up with
// gate = gsa gsb1 sum_k (A sfa)(B1 sfb1) and up = gsa gsb2 sum_k (A sfa)(B2 sfb2), written as
// fp32. kt_dual_gemm_silu_nvfp4_magnitude writes 1.1 |up| m1 + |silu(gate)| m2 (m1, m2 the two
// GEMMs' sums of |products| with their global scales), as dual_gemm_silu's reference does.
//
// Launch: grid (cdiv(N,16), cdiv(M,16), G), block (16, 16, 1), no dynamic shared memory.

#include "nvfp4_block_scale.cuh"

namespace kt_dual_nvfp4_reference {

constexpr int kTile = 16;
constexpr int kDepth = 32;
constexpr float kSiluLipschitz = 1.1f;  // max |silu'| = 1.0998, rounded up

template <bool kMagnitude>
__device__ __forceinline__ void dual_element(
    float* __restrict__ out, const unsigned char* __restrict__ A,
    const unsigned char* __restrict__ B1, const unsigned char* __restrict__ B2,
    const unsigned char* __restrict__ SFA, const unsigned char* __restrict__ SFB1,
    const unsigned char* __restrict__ SFB2, const float* __restrict__ GSA,
    const float* __restrict__ GSB1, const float* __restrict__ GSB2, int G, int M, int N, int K) {
  __shared__ float a_tile[kTile][kDepth + 1];
  __shared__ float b1_tile[kTile][kDepth + 1];
  __shared__ float b2_tile[kTile][kDepth + 1];
  const int g = static_cast<int>(blockIdx.z);
  if (g >= G) return;
  // Group g's operands and scale atoms follow the earlier groups'.
  const unsigned char* A_g = A + static_cast<long long>(g) * M * (K / 2);
  const unsigned char* B1_g = B1 + static_cast<long long>(g) * N * (K / 2);
  const unsigned char* B2_g = B2 + static_cast<long long>(g) * N * (K / 2);
  const unsigned char* SFA_g = SFA + g * kt_nvfp4::scale_group_bytes(M, K);
  const unsigned char* SFB1_g = SFB1 + g * kt_nvfp4::scale_group_bytes(N, K);
  const unsigned char* SFB2_g = SFB2 + g * kt_nvfp4::scale_group_bytes(N, K);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int m0 = static_cast<int>(blockIdx.y) * kTile, n0 = static_cast<int>(blockIdx.x) * kTile;
  const int thread = ty * kTile + tx;
  float gate = 0.0f, up = 0.0f, gate_magnitude = 0.0f, up_magnitude = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = thread; i < kTile * kDepth; i += kTile * kTile) {
      const int r = i / kDepth, k = i % kDepth;
      a_tile[r][k] = kt_nvfp4::dequantized(A_g, SFA_g, M, K, m0 + r, k0 + k);
      b1_tile[r][k] = kt_nvfp4::dequantized(B1_g, SFB1_g, N, K, n0 + r, k0 + k);
      b2_tile[r][k] = kt_nvfp4::dequantized(B2_g, SFB2_g, N, K, n0 + r, k0 + k);
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k) {
      gate += a_tile[ty][k] * b1_tile[tx][k];
      up += a_tile[ty][k] * b2_tile[tx][k];
      if (kMagnitude) {
        gate_magnitude += fabsf(a_tile[ty][k] * b1_tile[tx][k]);
        up_magnitude += fabsf(a_tile[ty][k] * b2_tile[tx][k]);
      }
    }
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m >= M || n >= N) return;
  const float gate_scale = GSA[0] * GSB1[0], up_scale = GSA[0] * GSB2[0];
  gate *= gate_scale;
  up *= up_scale;
  const float silu_gate = gate / (1.0f + expf(-gate));
  out[(static_cast<long long>(g) * M + m) * N + n] =
      kMagnitude ? kSiluLipschitz * fabsf(up) * fabsf(gate_scale) * gate_magnitude +
                       fabsf(silu_gate) * fabsf(up_scale) * up_magnitude
                 : silu_gate * up;
}

}  // namespace kt_dual_nvfp4_reference

#define KT_DUAL_NVFP4_PARAMS                                                         \
  float *__restrict__ out, const unsigned char *__restrict__ A,                      \
      const unsigned char *__restrict__ B1, const unsigned char *__restrict__ B2,    \
      const unsigned char *__restrict__ SFA, const unsigned char *__restrict__ SFB1, \
      const unsigned char *__restrict__ SFB2, const float *__restrict__ GSA,         \
      const float *__restrict__ GSB1, const float *__restrict__ GSB2, int G, int M, int N, int K

extern "C" __global__ void __launch_bounds__(256)
    kt_dual_gemm_silu_nvfp4_reference(KT_DUAL_NVFP4_PARAMS) {
  kt_dual_nvfp4_reference::dual_element<false>(out, A, B1, B2, SFA, SFB1, SFB2, GSA, GSB1, GSB2, G,
                                               M, N, K);
}

extern "C" __global__ void __launch_bounds__(256)
    kt_dual_gemm_silu_nvfp4_magnitude(KT_DUAL_NVFP4_PARAMS) {
  kt_dual_nvfp4_reference::dual_element<true>(out, A, B1, B2, SFA, SFB1, SFB2, GSA, GSB1, GSB2, G,
                                              M, N, K);
}
