// Read-only floor for the decode GEMM: time to read the 4096x7168 bf16 weights (58.7 MB) once,
// as a GEMM launch would see it (L2 flushed by a 256 MB write before each trial, CUDA events,
// median of 50), for several grid sizes; plus an empty kernel's event-timed duration.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
template <int U>
__global__ void __launch_bounds__(512) read_all(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p + i + u * stride));
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) { uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x12345678u) *sink = acc;
}
__global__ void empty_kernel() {}
int main() {
  const size_t bytes = 4096ull * 7168 * 2, flush_bytes = 256ull << 20;
  void *w, *flush; unsigned* sink;
  CK(cudaMalloc(&w, bytes)); CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(w, 0x3c, bytes));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  auto time = [&](auto launch) {
    std::vector<float> t;
    for (int trial = 0; trial < 60; ++trial) {
      cudaMemsetAsync(flush, trial, flush_bytes);
      cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); if (trial >= 10) t.push_back(ms * 1000);
    }
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
  };
  printf("empty kernel: %.2f us\n", time([&] { empty_kernel<<<sms, 128>>>(); }));
  const size_t n = bytes / 16;
  for (int per_sm : {1, 2, 4, 8}) {
    float u4 = time([&] { read_all<4><<<sms * per_sm, 512>>>((const uint4*)w, n, sink); });
    float u8 = time([&] { read_all<8><<<sms * per_sm, 512>>>((const uint4*)w, n, sink); });
    printf("read 58.7 MB, %d x 512 threads per SM: unroll 4 %.2f us (%.0f GB/s), unroll 8 %.2f us (%.0f GB/s)\n",
           per_sm, u4, bytes / u4 / 1e3, u8, bytes / u8 / 1e3);
  }
  CK(cudaGetLastError());
  return 0;
}
