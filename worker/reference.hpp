// Reference computations a family names in its manifest ("reference": {"kind": ...}), built into
// the worker. A reference gives the fp32 output a variant is validated against, and the same
// computation in the problem's own dtype that variants are timed against (the speedup baseline).
//
// "cublas_gemm": params {"a","b","c": buffer names, "m","n","k": integers}; row-major
// C[m,n] = A[m,k] * B[n,k]^T, A and B bf16/fp16, fp32 accumulate (CUBLAS_COMPUTE_32F). As
// column-major that is C^T = B * A^T: cublasGemmEx(T, N, n, m, k, B, ldb=k, A, lda=k, C, ldc=n).
//
// "kernel": the family's own reference kernel (kernel_reference.hpp); fp32 output only.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tuner/measure_protocol.hpp"
#include "worker/cublas_handle.hpp"
#include "worker/problem_buffers.hpp"

namespace kt {

class Reference {
 public:
  virtual ~Reference() = default;
  // The problem's output buffer the reference reproduces (the one validated).
  virtual const std::string& output_buffer() const = 0;
  virtual std::int64_t output_elements() const = 0;
  // Enqueues the fp32 reference of output_buffer() into out (output_elements() floats).
  virtual void compute_f32(CUdeviceptr out, CUstream stream) = 0;
  // Enqueues the computation with its output in the problem's dtype, into output_buffer().
  // std::logic_error for a reference that has none (a kernel reference).
  virtual void run_native(CUstream stream) = 0;
};

// Throws std::invalid_argument for an unknown kind or bad params (naming the field).
std::unique_ptr<Reference> make_reference(const ProblemInstance& problem,
                                          const ProblemBuffers& buffers,
                                          cuda::CublasHandle& cublas);

}  // namespace kt
