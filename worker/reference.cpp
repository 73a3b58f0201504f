#include "worker/reference.hpp"

#include <climits>
#include <cmath>
#include <stdexcept>

namespace kt {
namespace {

std::string buffer_param(const nlohmann::json& params, const char* field) {
  if (!params.contains(field) || !params[field].is_string())
    throw std::invalid_argument(std::string("reference param '") + field + "' must name a buffer");
  return params[field].get<std::string>();
}

int dim_param(const nlohmann::json& params, const char* field) {
  // Evaluated manifest expressions may arrive as 4096.0: any integral number is accepted.
  const bool integral = params.contains(field) && params[field].is_number() &&
                        params[field].get<double>() == std::floor(params[field].get<double>());
  if (!integral)
    throw std::invalid_argument(std::string("reference param '") + field + "' must be an integer");
  const double value = params[field].get<double>();
  if (value < 1 || value > INT_MAX)
    throw std::invalid_argument(std::string("reference param '") + field +
                                "' = " + std::to_string(value) + " is outside [1, 2^31)");
  return static_cast<int>(value);
}

cudaDataType_t cublas_type(const std::string& dtype) {
  if (dtype == "bf16") return CUDA_R_16BF;
  if (dtype == "fp16") return CUDA_R_16F;
  throw std::invalid_argument("cublas_gemm takes bf16 or fp16 inputs, not '" + dtype + "'");
}

class CublasGemm final : public Reference {
 public:
  CublasGemm(const ProblemInstance& problem, const ProblemBuffers& buffers,
             cuda::CublasHandle& cublas)
      : cublas_(cublas) {
    const nlohmann::json& p = problem.reference.params;
    a_name_ = buffer_param(p, "a");
    b_name_ = buffer_param(p, "b");
    c_name_ = buffer_param(p, "c");
    m_ = dim_param(p, "m");
    n_ = dim_param(p, "n");
    k_ = dim_param(p, "k");
    input_type_ = cublas_type(buffers.spec(a_name_).dtype);
    if (buffers.spec(b_name_).dtype != buffers.spec(a_name_).dtype)
      throw std::invalid_argument("cublas_gemm: A and B have different dtypes");
    output_type_ = cublas_type(buffers.spec(c_name_).dtype);
    check_size(buffers.spec(a_name_), std::int64_t{m_} * k_);
    check_size(buffers.spec(b_name_), std::int64_t{n_} * k_);
    check_size(buffers.spec(c_name_), std::int64_t{m_} * n_);
    a_ = buffers.buffer(a_name_).get();
    b_ = buffers.buffer(b_name_).get();
    c_ = buffers.buffer(c_name_).get();
  }

  const std::string& output_buffer() const override { return c_name_; }
  std::int64_t output_elements() const override { return std::int64_t{m_} * n_; }

  void compute_f32(CUdeviceptr out, CUstream stream) override { gemm(out, CUDA_R_32F, stream); }
  void run_native(CUstream stream) override { gemm(c_, output_type_, stream); }

 private:
  static void check_size(const BufferInstance& buffer, std::int64_t needed) {
    if (buffer.elements < needed)
      throw std::invalid_argument("cublas_gemm: buffer '" + buffer.name + "' holds " +
                                  std::to_string(buffer.elements) + " elements, needs " +
                                  std::to_string(needed));
  }

  void gemm(CUdeviceptr c, cudaDataType_t c_type, CUstream stream) {
    const float alpha = 1.0f, beta = 0.0f;
    cublasHandle_t handle = cublas_.on(stream);
    KT_CUBLAS(cublasGemmEx(
        handle, CUBLAS_OP_T, CUBLAS_OP_N, n_, m_, k_, &alpha, reinterpret_cast<const void*>(b_),
        input_type_, k_, reinterpret_cast<const void*>(a_), input_type_, k_, &beta,
        reinterpret_cast<void*>(c), c_type, n_, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  cuda::CublasHandle& cublas_;
  std::string a_name_, b_name_, c_name_;
  int m_ = 0, n_ = 0, k_ = 0;
  cudaDataType_t input_type_ = CUDA_R_16BF;
  cudaDataType_t output_type_ = CUDA_R_16BF;
  CUdeviceptr a_ = 0, b_ = 0, c_ = 0;
};

}  // namespace

std::unique_ptr<Reference> make_reference(const ProblemInstance& problem,
                                          const ProblemBuffers& buffers,
                                          cuda::CublasHandle& cublas) {
  if (problem.reference.kind == "cublas_gemm")
    return std::make_unique<CublasGemm>(problem, buffers, cublas);
  throw std::invalid_argument("unknown reference kind '" + problem.reference.kind + "'");
}

}  // namespace kt
