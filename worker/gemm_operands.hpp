// The operands of a row-major GEMM C[m,n] = A[m,k] * B[n,k]^T as a library reference or baseline
// names them in its params ({"a","b","c": buffer names, "m","n","k": integers}, evaluated by the
// daemon): checked against the problem's buffers (A and B of one 16-bit dtype, every buffer large
// enough) and resolved to what the library is handed. Errors name the kind and the field.
#pragma once

#include <cuda.h>
#include <library_types.h>

#include <string>

#include <nlohmann/json.hpp>

#include "worker/problem_buffers.hpp"

namespace kt {

struct GemmOperands {
  std::string c_name;  // the output buffer
  int m = 0, n = 0, k = 0;
  cudaDataType_t input_type = CUDA_R_16BF;  // A and B
  cudaDataType_t output_type = CUDA_R_16BF;
  CUdeviceptr a = 0, b = 0, c = 0;  // as kernels see them (inside the guards)
};

// Throws std::invalid_argument naming `kind` ("cublas_gemm", ...) and the bad field.
GemmOperands gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                           const std::string& kind);

// Grouped dual GEMM operands ({"a","b1","b2","c": buffer names, "g","m","n","k": integers}): for
// each of g groups C_g[m,n] from A_g[m,k], B1_g[n,k] and B2_g[n,k], the groups back to back.
struct DualGemmOperands {
  std::string c_name;
  int g = 0, m = 0, n = 0, k = 0;
  cudaDataType_t input_type = CUDA_R_16BF;  // A, B1 and B2
  cudaDataType_t output_type = CUDA_R_16BF;
  std::string output_dtype;  // "bf16" | "fp16"
  CUdeviceptr a = 0, b1 = 0, b2 = 0, c = 0;
};

// Throws std::invalid_argument naming `kind` and the bad field.
DualGemmOperands dual_gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                                    const std::string& kind);

}  // namespace kt
