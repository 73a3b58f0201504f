// Reference computations a family names in its manifest ("reference": {"kind": ...}), built into
// the worker. A reference gives the fp32 output a variant is validated against, and the same
// computation in the problem's own dtype that variants are timed against (the speedup baseline).
//
// "cublas_gemm": params {"a","b","c": buffer names, "m","n","k": integers}; row-major
// C[m,n] = A[m,k] * B[n,k]^T, A and B bf16/fp16, fp32 accumulate (CUBLAS_COMPUTE_32F). As
// column-major that is C^T = B * A^T: cublasGemmEx(T, N, n, m, k, B, ldb=k, A, lda=k, C, ldc=n).
//
// Either may also compute the magnitude m of every output element, the term of the per-element
// bound that grows with what was summed (validator.hpp, tuner/error_bound.hpp): cublas_gemm as
// one more GEMM, |A| |B|^T on copies of the absolute values (exact: the sign bit cleared) into
// fp32; a kernel reference with the family's magnitude kernel (reference.magnitude).
//
// "kernel": the family's own reference kernel (kernel_reference.hpp); fp32 output only.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tuner/measure_protocol.hpp"
#include "worker/cublas_handle.hpp"
#include "worker/gemm_operands.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/support_kernels.hpp"

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

  // What the reference computes as the magnitude of an element, and over how long a reduction;
  // none: it computes no magnitude (a family whose bound has no magnitude term).
  struct Magnitude {
    std::int64_t reduction = 1;  // K of u(dtype, K)
    std::string what;            // "|A|*|B|^T"
  };
  virtual std::optional<Magnitude> magnitude() const { return std::nullopt; }
  // Computes the magnitude of every element into out (output_elements() floats) on stream and
  // waits for it (the temporary copies it may need are freed before it returns). std::logic_error
  // for a reference without one.
  virtual void compute_magnitude_f32(CUdeviceptr out, CUstream stream);
};

// The copies of |A| and |B| compute_gemm_magnitude makes take at most this much each.
inline constexpr std::size_t kMagnitudeCopyBytes = std::size_t{256} << 20;

// cublas_gemm's magnitude, |A| |B|^T into out (m * n floats): the same GEMM on copies of the
// absolute values (the sign bit cleared: exact), a block of rows of A and of B at a time (rows
// are contiguous) so the copies take at most copy_bytes each however large the problem. The
// stream orders each copy after the GEMM that read the previous one; waits for the stream before
// the copies are freed. Throws CudaError / CublasError.
void compute_gemm_magnitude(cuda::CublasHandle& cublas, const cuda::SupportKernels& support,
                            const GemmOperands& gemm, CUdeviceptr out, CUstream stream,
                            std::size_t copy_bytes = kMagnitudeCopyBytes);

// Throws std::invalid_argument for an unknown kind or bad params (naming the field).
std::unique_ptr<Reference> make_reference(const ProblemInstance& problem,
                                          const ProblemBuffers& buffers, cuda::CublasHandle& cublas,
                                          const cuda::SupportKernels& support);

}  // namespace kt
