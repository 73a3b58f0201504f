// The operands of a row-major GEMM C[m,n] = A[m,k] * B[n,k]^T as a library reference or baseline
// names them in its params ({"a","b","c": buffer names, "m","n","k": integers}, evaluated by the
// daemon): checked against the problem's buffers (A and B of one 16-bit dtype, every buffer large
// enough) and resolved to what the library is handed; likewise a grouped dual GEMM's and a scaled
// fp8 GEMM's below. Errors name the kind and the field.
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

// Scaled fp8 GEMM operands ({"a","b","c","scale_a","scale_b": buffer names, "m","n","k":
// integers, optional "block_scaled": a boolean}): C[m,n] (16-bit) from A[m,k] and B[n,k] (each
// e4m3 or e5m2), every element dequantized by an f32 scale before the fp32 accumulation. Per
// tensor, one scale each (scale_a[0], scale_b[0]); block_scaled, with kb = cdiv(k,128), one per
// 1x128 block of A (scale_a [kb][m], m contiguous) and one per 128x128 block of B (scale_b
// [cdiv(n,128)][kb], row-major).
struct Fp8GemmOperands {
  std::string c_name, scale_a_name, scale_b_name;
  int m = 0, n = 0, k = 0;
  bool block_scaled = false;
  std::string a_dtype, b_dtype, c_dtype;  // as the buffers name them ("e4m3", "bf16", ...)
  cudaDataType_t a_type = CUDA_R_8F_E4M3, b_type = CUDA_R_8F_E4M3;
  cudaDataType_t output_type = CUDA_R_16BF;
  CUdeviceptr a = 0, b = 0, c = 0, scale_a = 0, scale_b = 0;
};

// Throws std::invalid_argument naming `kind` and the bad field.
Fp8GemmOperands fp8_gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                                  const std::string& kind);

}  // namespace kt
