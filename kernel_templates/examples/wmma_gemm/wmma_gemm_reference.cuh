// Reference for wmma_gemm: one thread per element of C. The dot product is summed in double, so
// at large K the reference's own rounding is far below the kernel's fp32 one; the magnitude kernel
// writes sum_k |A[row,k]| |B[k,col]|, the m of the per-element bound's magnitude term.
#include <cuda_fp16.h>

template <bool kMagnitude>
__device__ __forceinline__ void wmma_gemm_reference_element(float* out, const __half* a,
                                                            const __half* b, int m, int n, int k) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  double sum = 0.0;
  for (int i = 0; i < k; ++i) {
    const double product = static_cast<double>(__half2float(a[static_cast<long long>(row) * k + i])) *
                           __half2float(b[static_cast<long long>(i) * n + col]);
    sum += kMagnitude ? fabs(product) : product;
  }
  out[static_cast<long long>(row) * n + col] = static_cast<float>(sum);
}

extern "C" __global__ void wmma_gemm_reference(float* out, const __half* a, const __half* b, int m,
                                               int n, int k) {
  wmma_gemm_reference_element<false>(out, a, b, m, n, k);
}

extern "C" __global__ void wmma_gemm_magnitude(float* out, const __half* a, const __half* b, int m,
                                               int n, int k) {
  wmma_gemm_reference_element<true>(out, a, b, m, n, k);
}
