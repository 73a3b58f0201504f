#include "worker/reference.hpp"

#include "worker/gemm_operands.hpp"
#include "worker/kernel_reference.hpp"

#include <stdexcept>

namespace kt {
namespace {

constexpr const char* kWhat = "cublas_gemm";

class CublasGemm final : public Reference {
 public:
  CublasGemm(const ProblemInstance& problem, const ProblemBuffers& buffers,
             cuda::CublasHandle& cublas)
      : cublas_(cublas), gemm_(gemm_operands(problem.reference.params, buffers, kWhat)) {}

  const std::string& output_buffer() const override { return gemm_.c_name; }
  std::int64_t output_elements() const override { return std::int64_t{gemm_.m} * gemm_.n; }

  void compute_f32(CUdeviceptr out, CUstream stream) override { gemm(out, CUDA_R_32F, stream); }
  void run_native(CUstream stream) override { gemm(gemm_.c, gemm_.output_type, stream); }

 private:
  void gemm(CUdeviceptr c, cudaDataType_t c_type, CUstream stream) {
    const float alpha = 1.0f, beta = 0.0f;
    cublasHandle_t handle = cublas_.on(stream);
    KT_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, gemm_.n, gemm_.m, gemm_.k, &alpha,
                           reinterpret_cast<const void*>(gemm_.b), gemm_.input_type, gemm_.k,
                           reinterpret_cast<const void*>(gemm_.a), gemm_.input_type, gemm_.k, &beta,
                           reinterpret_cast<void*>(c), c_type, gemm_.n, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
  }

  cuda::CublasHandle& cublas_;
  GemmOperands gemm_;
};

}  // namespace

std::unique_ptr<Reference> make_reference(const ProblemInstance& problem,
                                          const ProblemBuffers& buffers,
                                          cuda::CublasHandle& cublas) {
  if (problem.reference.kind == "cublas_gemm")
    return std::make_unique<CublasGemm>(problem, buffers, cublas);
  if (problem.reference.kind == "kernel") return make_kernel_reference(problem, buffers);
  throw std::invalid_argument("unknown reference kind '" + problem.reference.kind + "'");
}

}  // namespace kt
