// How far do correct GEMMs with another fp32 accumulation order land from the worker's
// reference (cuBLAS, fp32 output), element by element? The evidence behind the GEMM and dual
// GEMM tolerances in kernel_templates/*/manifest.json (kernel_templates/README.md, Tolerance).
// Not part of the build: nvcc -O2 -arch=sm_90 -o probe probe.cu -lcublas && ./probe
//
// Inputs are uniform in [-1, 1) like the worker's. Candidates, each rounded once to the 16-bit
// output dtype: cuBLAS's own 16-bit output; a plain sequential fp32 FMA loop per element; an
// 8-way split-K with fp32 partials summed in reverse order; the dual GEMM silu(A B1^T) * (A B2^T)
// from 8-way split-K partials, against silu(ref1) * ref2. "atol needed" is
// max(|out - ref| - rtol * |ref|) over the elements, for the manifest's rtol.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                          \
  do {                                                            \
    const cudaError_t status = (call);                            \
    if (status != cudaSuccess) {                                  \
      std::printf("%s: %s\n", #call, cudaGetErrorString(status)); \
      std::exit(1);                                               \
    }                                                             \
  } while (0)
#define CHECK_CUBLAS(call)                                                    \
  do {                                                                        \
    const cublasStatus_t status = (call);                                     \
    if (status != CUBLAS_STATUS_SUCCESS) {                                    \
      std::printf("%s: cuBLAS status %d\n", #call, static_cast<int>(status)); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

template <typename T>
__device__ float load(const T* p, long long i);
template <>
__device__ float load(const __nv_bfloat16* p, long long i) {
  return __bfloat162float(p[i]);
}
template <>
__device__ float load(const __half* p, long long i) {
  return __half2float(p[i]);
}
template <typename T>
__device__ T round_to(float f);
template <>
__device__ __nv_bfloat16 round_to(float f) {
  return __float2bfloat16_rn(f);
}
template <>
__device__ __half round_to(float f) {
  return __float2half_rn(f);
}

__device__ unsigned long long mix64(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

template <typename T>
__global__ void fill_uniform(T* p, long long n, unsigned long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float value = (float)(mix64(seed ^ mix64(i)) >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    p[i] = round_to<T>(value);
  }
}

// partials[slice][m][n] = A[m, slice's K range] . B[n, same range]: 16x16 shared-memory tiles,
// one fp32 FMA chain per element. M, N, K / slices must be multiples of 16.
template <typename T>
__global__ void gemm_partials(float* partials, const T* A, const T* B, int M, int N, int K,
                              int slices) {
  __shared__ float a_tile[16][17], b_tile[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col = blockIdx.x * 16 + tx, row = blockIdx.y * 16 + ty;
  const int per_slice = K / slices, k_begin = blockIdx.z * per_slice;
  float acc = 0;
  for (int k0 = k_begin; k0 < k_begin + per_slice; k0 += 16) {
    a_tile[ty][tx] = load(A, (long long)(blockIdx.y * 16 + ty) * K + k0 + tx);
    b_tile[ty][tx] = load(B, (long long)(blockIdx.x * 16 + ty) * K + k0 + tx);
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc = fmaf(a_tile[ty][k], b_tile[tx][k], acc);
    __syncthreads();
  }
  partials[(long long)blockIdx.z * M * N + (long long)row * N + col] = acc;
}

// C = the slices summed last to first (another order again); with gate_partials, the dual GEMM
// epilogue silu(sum1) * sum2.
template <typename T>
__global__ void sum_slices(T* C, const float* partials, const float* gate_partials, long long mn,
                           int slices) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < mn;
       i += (long long)gridDim.x * blockDim.x) {
    float sum = 0, gate = 0;
    for (int s = slices - 1; s >= 0; --s) {
      sum += partials[s * mn + i];
      if (gate_partials) gate += gate_partials[s * mn + i];
    }
    const float value = gate_partials ? sum / (1.0f + expf(-sum)) * gate : sum;
    C[i] = round_to<T>(value);
  }
}

__global__ void silu_times(float* out, const float* x1, const float* x2, long long mn) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < mn;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = (float)((double)x1[i] / (1.0 + exp(-(double)x1[i])) * (double)x2[i]);
}

float to_float(__nv_bfloat16 b) {
  return __bfloat162float(b);
}
float to_float(__half h) {
  return __half2float(h);
}

template <typename T>
void report(const char* what, const T* device_out, const float* device_ref, long long mn,
            double rtol, double atol) {
  std::vector<T> out(mn);
  std::vector<float> ref(mn);
  CHECK_CUDA(cudaMemcpy(out.data(), device_out, mn * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(ref.data(), device_ref, mn * sizeof(float), cudaMemcpyDeviceToHost));
  double atol_needed = 0, diff_sq = 0, ref_sq = 0, max_abs = 0, max_ref = 0;
  long long bad = 0, non_finite = 0;
  for (long long i = 0; i < mn; ++i) {
    const double o = to_float(out[i]), r = ref[i];
    if (!std::isfinite(o)) {
      ++non_finite;
      continue;
    }
    const double d = std::fabs(o - r);
    atol_needed = std::max(atol_needed, d - rtol * std::fabs(r));
    diff_sq += d * d;
    ref_sq += r * r;
    max_abs = std::max(max_abs, d);
    max_ref = std::max(max_ref, std::fabs(r));
    if (d > atol + rtol * std::fabs(r)) ++bad;
  }
  std::printf(
      "  %-28s atol needed %-9.3g (manifest %.3g, rtol %.3g)  bad %-4lld non-finite %-5lld "
      "rel_l2 %.3g  max_abs %.3g  max|ref| %.3g\n",
      what, atol_needed, atol, rtol, bad, non_finite, std::sqrt(diff_sq / ref_sq), max_abs,
      max_ref);
}

template <typename T>
void probe(const char* dtype, cudaDataType_t type, int M, int N, int K, double rtol, double atol,
           double dual_atol, cublasHandle_t cublas) {
  std::printf("%s M=%d N=%d K=%d\n", dtype, M, N, K);
  const long long mn = (long long)M * N;
  const int kSlices = 8;
  T *A, *B, *B2, *C;
  float *ref, *ref2, *dual_ref, *partials, *gate_partials;
  CHECK_CUDA(cudaMalloc(&A, (long long)M * K * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B, (long long)N * K * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B2, (long long)N * K * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&C, mn * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&ref, mn * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&ref2, mn * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dual_ref, mn * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&partials, kSlices * mn * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&gate_partials, kSlices * mn * sizeof(float)));
  fill_uniform<<<4096, 256>>>(A, (long long)M * K, 1);
  fill_uniform<<<4096, 256>>>(B, (long long)N * K, 2);
  fill_uniform<<<4096, 256>>>(B2, (long long)N * K, 3);
  CHECK_CUDA(cudaGetLastError());
  // The worker's reference call: row-major C[m,n] = A[m,:] . B[n,:], fp32 accumulate and output.
  const float one = 1, zero = 0;
  auto cublas_gemm = [&](const T* b, void* c, cudaDataType_t c_type) {
    CHECK_CUBLAS(cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, b, type, K, A, type,
                              K, &zero, c, c_type, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  cublas_gemm(B, ref, CUDA_R_32F);
  cublas_gemm(B2, ref2, CUDA_R_32F);
  cublas_gemm(B, C, type);
  report("cuBLAS, 16-bit output", C, ref, mn, rtol, atol);

  const dim3 block(16, 16);
  gemm_partials<<<dim3(N / 16, M / 16, 1), block>>>(partials, A, B, M, N, K, 1);
  sum_slices<<<4096, 256>>>(C, partials, (const float*)nullptr, mn, 1);
  report("sequential fp32 FMA", C, ref, mn, rtol, atol);

  gemm_partials<<<dim3(N / 16, M / 16, kSlices), block>>>(partials, A, B, M, N, K, kSlices);
  sum_slices<<<4096, 256>>>(C, partials, (const float*)nullptr, mn, kSlices);
  report("split-K 8, summed in reverse", C, ref, mn, rtol, atol);

  gemm_partials<<<dim3(N / 16, M / 16, kSlices), block>>>(gate_partials, A, B2, M, N, K, kSlices);
  sum_slices<<<4096, 256>>>(C, partials, gate_partials, mn, kSlices);
  silu_times<<<4096, 256>>>(dual_ref, ref, ref2, mn);
  report("dual GEMM + SiLU, split-K 8", C, dual_ref, mn, rtol, dual_atol);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  for (void* p : {(void*)A, (void*)B, (void*)B2, (void*)C, (void*)ref, (void*)ref2, (void*)dual_ref,
                  (void*)partials, (void*)gate_partials})
    CHECK_CUDA(cudaFree(p));
}

int main() {
  cublasHandle_t cublas;
  CHECK_CUBLAS(cublasCreate(&cublas));
  const int shapes[][3] = {
      {4096, 4096, 4096}, {8192, 8192, 16384}, {512, 512, 262144}, {128, 128, 1048576}};
  // The manifests' values: rtol 2^-7 (bf16) / 2^-10 (fp16); GEMM atol 2^-5, dual GEMM 0.5.
  for (const auto& s : shapes) {
    probe<__nv_bfloat16>("bf16", CUDA_R_16BF, s[0], s[1], s[2], 1.0 / 128, 1.0 / 32, 0.5, cublas);
    probe<__half>("fp16", CUDA_R_16F, s[0], s[1], s[2], 1.0 / 1024, 1.0 / 32, 0.5, cublas);
  }
  CHECK_CUBLAS(cublasDestroy(cublas));
  return 0;
}
