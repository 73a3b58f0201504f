// Reference for the gemm_fp8 family: the dequantized inputs multiplied in plain fp32, one output
// element per thread, C[m,n] = sum_k (A[m,k] sa(m,k)) (B[n,k] sb(n,k)), written as fp32, with
// sa, sb the per-tensor factors (BLOCK_SCALED 0) or the 1x128 / 128x128 block factors
// (BLOCK_SCALED 1; layouts in gemm_fp8_wgmma.cuh). Tiles pass through shared memory only so that
// a full-size check takes milliseconds; the arithmetic is the obvious one (products of exactly
// decoded fp8 values and their scales, summed in k order). kt_gemm_fp8_magnitude writes
// sum_k |A sa| |B sb|, the per-element bound's magnitude.
//
// Launch: grid (min(cdiv(N,16),65535), min(cdiv(M,16),65535), 1), block (16, 16, 1), no dynamic
// shared memory.

#if defined(KT_DTYPE_E4M3) == defined(KT_DTYPE_E5M2)
#error "define exactly one of KT_DTYPE_E4M3 and KT_DTYPE_E5M2 (the dtype of A)"
#endif

namespace kt_fp8_reference {

constexpr int kTile = 16;
constexpr int kDepth = 32;
constexpr int kScaleBlock = 128;

// An fp8 value, exactly: sign, EXPONENT_BITS exponent bits, the rest mantissa, IEEE-like
// subnormals (e4m3's only NaN pattern never occurs in the inputs).
template <int kExponentBits>
__device__ __forceinline__ float decode_fp8(unsigned char bits) {
  constexpr int kMantissaBits = 7 - kExponentBits;
  constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  const int exponent = (bits >> kMantissaBits) & ((1 << kExponentBits) - 1);
  const int mantissa = bits & ((1 << kMantissaBits) - 1);
  const float magnitude = exponent == 0
                              ? ldexpf(static_cast<float>(mantissa), 1 - kBias - kMantissaBits)
                              : ldexpf(static_cast<float>(mantissa + (1 << kMantissaBits)),
                                       exponent - kBias - kMantissaBits);
  return (bits & 0x80) ? -magnitude : magnitude;
}

#if defined(KT_DTYPE_E4M3)
constexpr int kAExponentBits = 4;
#else
constexpr int kAExponentBits = 5;
#endif

template <bool kMagnitude>
__device__ __forceinline__ void gemm_fp8_element_tile(int m0, int n0, float* __restrict__ out,
                                                      const unsigned char* __restrict__ A,
                                                      const unsigned char* __restrict__ B,
                                                      const float* __restrict__ SA,
                                                      const float* __restrict__ SB, int M, int N,
                                                      int K, int block_scaled) {
  __shared__ float a_tile[kTile][kDepth + 1];
  __shared__ float b_tile[kTile][kDepth + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int thread = ty * kTile + tx;
  const int k_blocks = (K + kScaleBlock - 1) / kScaleBlock;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    for (int i = thread; i < kTile * kDepth; i += kTile * kTile) {
      const int r = i / kDepth, k = k0 + i % kDepth;
      const int m = m0 + r, n = n0 + r;
      float a = 0.0f, b = 0.0f;
      if (m < M && k < K)
        a = decode_fp8<kAExponentBits>(A[static_cast<long long>(m) * K + k]) *
            (block_scaled ? SA[static_cast<long long>(k / kScaleBlock) * M + m] : SA[0]);
      if (n < N && k < K)
        b = decode_fp8<4>(B[static_cast<long long>(n) * K + k]) *
            (block_scaled ? SB[static_cast<long long>(n / kScaleBlock) * k_blocks + k / kScaleBlock]
                          : SB[0]);
      a_tile[r][i % kDepth] = a;
      b_tile[r][i % kDepth] = b;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k) {
      const float product = a_tile[ty][k] * b_tile[tx][k];
      sum += kMagnitude ? fabsf(product) : product;
    }
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m < M && n < N) out[static_cast<long long>(m) * N + n] = sum;
}

// CUDA caps a grid's y extent at 65535 blocks, fewer than M = 2^20 needs at 16 rows a block: the
// launch clamps both extents and each block strides over the tiles.
template <bool kMagnitude>
__device__ __forceinline__ void gemm_fp8_element(float* __restrict__ out,
                                                 const unsigned char* __restrict__ A,
                                                 const unsigned char* __restrict__ B,
                                                 const float* __restrict__ SA,
                                                 const float* __restrict__ SB, int M, int N, int K,
                                                 int block_scaled) {
  for (int m0 = static_cast<int>(blockIdx.y) * kTile; m0 < M;
       m0 += static_cast<int>(gridDim.y) * kTile)
    for (int n0 = static_cast<int>(blockIdx.x) * kTile; n0 < N;
         n0 += static_cast<int>(gridDim.x) * kTile)
      gemm_fp8_element_tile<kMagnitude>(m0, n0, out, A, B, SA, SB, M, N, K, block_scaled);
}

}  // namespace kt_fp8_reference

extern "C" __global__ void kt_gemm_fp8_reference(float* __restrict__ out,
                                                 const unsigned char* __restrict__ A,
                                                 const unsigned char* __restrict__ B,
                                                 const float* __restrict__ SA,
                                                 const float* __restrict__ SB, int M, int N, int K,
                                                 int block_scaled) {
  kt_fp8_reference::gemm_fp8_element<false>(out, A, B, SA, SB, M, N, K, block_scaled);
}

extern "C" __global__ void kt_gemm_fp8_magnitude(float* __restrict__ out,
                                                 const unsigned char* __restrict__ A,
                                                 const unsigned char* __restrict__ B,
                                                 const float* __restrict__ SA,
                                                 const float* __restrict__ SB, int M, int N, int K,
                                                 int block_scaled) {
  kt_fp8_reference::gemm_fp8_element<true>(out, A, B, SA, SB, M, N, K, block_scaled);
}
