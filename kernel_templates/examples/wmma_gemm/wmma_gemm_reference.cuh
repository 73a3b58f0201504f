// Reference for wmma_gemm: one thread per element of C, a plain fp32 dot product.
#include <cuda_fp16.h>

extern "C" __global__ void wmma_gemm_reference(float* out, const __half* a, const __half* b, int m,
                                               int n, int k) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i)
    sum += __half2float(a[static_cast<long long>(row) * k + i]) *
           __half2float(b[static_cast<long long>(i) * n + col]);
  out[static_cast<long long>(row) * n + col] = sum;
}
