#include "worker/reference.hpp"

#include "tuner/error_bound.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/driver_api.hpp"
#include "worker/gemm_operands.hpp"
#include "worker/kernel_reference.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace kt {
namespace {

constexpr const char* kWhat = "cublas_gemm";

// The dtype name of a GEMM input type (what the support kernels take).
std::string dtype_name(cudaDataType_t type) {
  if (type == CUDA_R_16BF) return "bf16";
  if (type == CUDA_R_16F) return "fp16";
  throw std::invalid_argument("cublas_gemm: no dtype name for cudaDataType_t " +
                              std::to_string(static_cast<int>(type)));
}

// Row-major C[rows, cols] (leading dimension gemm.n) = A[rows, k] * B[cols, k]^T with the
// operands' k and types: cublasGemmEx(T, N) on the column-major view C^T = B A^T.
void gemm_rows(cuda::CublasHandle& cublas, const GemmOperands& gemm, int rows, int cols,
               CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, cudaDataType_t c_type,
               CUstream stream) {
  const float alpha = 1.0f, beta = 0.0f;
  KT_CUBLAS(cublasGemmEx(cublas.on(stream), CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, gemm.k, &alpha,
                         reinterpret_cast<const void*>(b), gemm.input_type, gemm.k,
                         reinterpret_cast<const void*>(a), gemm.input_type, gemm.k, &beta,
                         reinterpret_cast<void*>(c), c_type, gemm.n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
}

class CublasGemm final : public Reference {
 public:
  CublasGemm(const ProblemInstance& problem, const ProblemBuffers& buffers,
             cuda::CublasHandle& cublas, const cuda::SupportKernels& support)
      : cublas_(cublas),
        support_(support),
        gemm_(gemm_operands(problem.reference.params, buffers, kWhat)) {}

  const std::string& output_buffer() const override { return gemm_.c_name; }
  std::int64_t output_elements() const override { return std::int64_t{gemm_.m} * gemm_.n; }

  void compute_f32(CUdeviceptr out, CUstream stream) override {
    gemm_rows(cublas_, gemm_, gemm_.m, gemm_.n, gemm_.a, gemm_.b, out, CUDA_R_32F, stream);
  }
  void run_native(CUstream stream) override {
    gemm_rows(cublas_, gemm_, gemm_.m, gemm_.n, gemm_.a, gemm_.b, gemm_.c, gemm_.output_type,
              stream);
  }

  std::optional<Magnitude> magnitude() const override { return Magnitude{gemm_.k, kGemmMagnitude}; }
  void compute_magnitude_f32(CUdeviceptr out, CUstream stream) override {
    compute_gemm_magnitude(cublas_, support_, gemm_, out, stream);
  }

 private:
  cuda::CublasHandle& cublas_;
  const cuda::SupportKernels& support_;
  GemmOperands gemm_;
};

}  // namespace

void compute_gemm_magnitude(cuda::CublasHandle& cublas, const cuda::SupportKernels& support,
                            const GemmOperands& gemm, CUdeviceptr out, CUstream stream,
                            std::size_t copy_bytes) {
  const std::string dtype = dtype_name(gemm.input_type);
  const std::size_t row_bytes = std::size_t(gemm.k) * buffer_element_bytes(dtype);
  const int rows = static_cast<int>(
      std::min<std::size_t>(std::max<std::size_t>(1, copy_bytes / row_bytes), gemm.m + gemm.n));
  const int a_rows = std::min(gemm.m, rows), b_rows = std::min(gemm.n, rows);
  cuda::DeviceBuffer abs_a(a_rows * row_bytes), abs_b(b_rows * row_bytes);
  for (int n0 = 0; n0 < gemm.n; n0 += b_rows) {
    const int nb = std::min(b_rows, gemm.n - n0);
    support.abs_copy(abs_b.get(), gemm.b + n0 * row_bytes, std::int64_t{nb} * gemm.k, dtype,
                     stream);
    for (int m0 = 0; m0 < gemm.m; m0 += a_rows) {
      const int mb = std::min(a_rows, gemm.m - m0);
      // Copied once when A fits in one block, else again for every block of B.
      if (n0 == 0 || a_rows < gemm.m)
        support.abs_copy(abs_a.get(), gemm.a + m0 * row_bytes, std::int64_t{mb} * gemm.k, dtype,
                         stream);
      const CUdeviceptr block = out + (std::size_t(m0) * gemm.n + n0) * sizeof(float);
      gemm_rows(cublas, gemm, mb, nb, abs_a.get(), abs_b.get(), block, CUDA_R_32F, stream);
    }
  }
  KT_CU(cuStreamSynchronize, stream);
}

void Reference::compute_magnitude_f32(CUdeviceptr, CUstream) {
  throw std::logic_error("this reference computes no magnitude");
}

std::unique_ptr<Reference> make_reference(const ProblemInstance& problem,
                                          const ProblemBuffers& buffers, cuda::CublasHandle& cublas,
                                          const cuda::SupportKernels& support) {
  if (problem.reference.kind == "cublas_gemm")
    return std::make_unique<CublasGemm>(problem, buffers, cublas, support);
  if (problem.reference.kind == "kernel") return make_kernel_reference(problem, buffers);
  throw std::invalid_argument("unknown reference kind '" + problem.reference.kind + "'");
}

}  // namespace kt
