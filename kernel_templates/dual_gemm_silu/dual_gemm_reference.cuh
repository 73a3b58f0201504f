// Reference for the dual_gemm_silu family: plain fp32 arithmetic, one output element per thread,
// C_g[m,n] = silu(sum_k A_g[m,k] B1_g[n,k]) * sum_k A_g[m,k] B2_g[n,k], written as fp32. Tiles of
// A, B1 and B2 pass through shared memory only so that a full-size check takes milliseconds, not
// seconds; the arithmetic is the obvious one (fp32 products summed in k order, exact expf).
// kt_dual_gemm_silu_magnitude, the same sums with the absolute values beside them, gives the
// per-element bound its magnitude.
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

// silu's steepest slope: max_g |silu'(g)| = 1.0998 (at g = 2.40), rounded up.
constexpr float kSiluLipschitz = 1.1f;

// One output element of group blockIdx.z: silu(gate) * up, or with kMagnitude the magnitude
// kSiluLipschitz |up| m1 + |silu(gate)| m2 where m1 = Σ_k |A[m,k]| |B1[n,k]| and
// m2 = Σ_k |A[m,k]| |B2[n,k]| are the two GEMMs' magnitudes.
template <bool kMagnitude>
__device__ __forceinline__ void dual_gemm_element(float* __restrict__ out,
                                                  const unsigned short* __restrict__ A,
                                                  const unsigned short* __restrict__ B1,
                                                  const unsigned short* __restrict__ B2, int G,
                                                  int M, int N, int K) {
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
  float gate_magnitude = 0.0f, up_magnitude = 0.0f;  // kMagnitude only
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
      if (kMagnitude) {
        gate_magnitude += fabsf(a_tile[ty][k] * b1_tile[tx][k]);
        up_magnitude += fabsf(a_tile[ty][k] * b2_tile[tx][k]);
      }
    }
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m >= M || n >= N) return;
  const float silu_gate = gate / (1.0f + expf(-gate));
  out[(static_cast<long long>(g) * M + m) * N + n] =
      kMagnitude ? kSiluLipschitz * fabsf(up) * gate_magnitude + fabsf(silu_gate) * up_magnitude
                 : silu_gate * up;
}

}  // namespace kt_dual_reference

extern "C" __global__ void __launch_bounds__(256)
    kt_dual_gemm_silu_reference(float* __restrict__ out, const unsigned short* __restrict__ A,
                                const unsigned short* __restrict__ B1,
                                const unsigned short* __restrict__ B2, int G, int M, int N, int K) {
  kt_dual_reference::dual_gemm_element<false>(out, A, B1, B2, G, M, N, K);
}

// The magnitude of each output element for the per-element bound (manifest reference.magnitude).
// A kernel's gate and up differ from the exact ones by e1 <= c u m1 and e2 <= c u m2 (the GEMM
// bound, u = u(dtype, K)); then |silu(gate') up' - silu(gate) up| <= |silu(gate') - silu(gate)|
// |up'| + |silu(gate)| |up' - up| <= 1.1 e1 |up| + |silu(gate)| e2 + 1.1 e1 e2, silu being
// 1.1-Lipschitz. Written: 1.1 |up| m1 + |silu(gate)| m2, the first-order part, so the family's
// bound is c u times this. The product of the two GEMMs' errors, 1.1 e1 e2, is left out: it is of
// second order, and only where |up| and |silu(gate)| are both below e2 and e1 is it comparable to
// the rest. Same arguments and launch as kt_dual_gemm_silu_reference.
extern "C" __global__ void __launch_bounds__(256)
    kt_dual_gemm_silu_magnitude(float* __restrict__ magnitude, const unsigned short* __restrict__ A,
                                const unsigned short* __restrict__ B1,
                                const unsigned short* __restrict__ B2, int G, int M, int N, int K) {
  kt_dual_reference::dual_gemm_element<true>(magnitude, A, B1, B2, G, M, N, K);
}
