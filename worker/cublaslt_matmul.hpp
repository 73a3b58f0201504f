// One cublasLt matmul as the library baselines use it: a row-major C[m,n] = A[m,k] * B[n,k]^T
// (fp32 accumulation), optionally strided-batched, with the heuristic's top algorithms for a
// 32 MiB workspace, and the choice among them by timing each on this GPU (rounds over all of
// them, every sample after an L2 flush). In cuBLAS's column-major terms: C^T (n x m) =
// op_T(B) * A^T, B stored k x n (ld k), A k x m (ld k), C n x m (ld n): both operands K-major, the
// "TN" form cuBLAS's fp8 matmuls require, so the same matmul takes fp8 operands with their scales.
#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/cuda_handle.hpp"
#include "worker/worker_device.hpp"

namespace kt {

inline constexpr std::size_t kCublasLtWorkspaceBytes = 32u << 20;
inline constexpr int kCublasLtHeuristicAlgorithms = 8;

struct LtMatmulShape {
  int m = 0, n = 0, k = 0;
  int batch = 1;  // > 1: A, B and C advance by m*k, n*k and m*n elements per batch
  cudaDataType_t input_type = CUDA_R_16BF;
  cudaDataType_t output_type = CUDA_R_16BF;
  // A's type where it differs from B's (fp8: an e5m2 A with an e4m3 B); input_type is then B's.
  std::optional<cudaDataType_t> a_input_type = std::nullopt;
};

// fp8 operands' dequantization scales, in this file's row-major names (A [m,k], B [n,k]); cublasLt
// applies each to its own operand (its A is our B). Modes other than SCALAR_32F are cuBLAS's
// block scalings, each reading its scales in the layout the cuBLAS documentation gives for it.
struct LtScales {
  CUdeviceptr a = 0, b = 0;  // device f32 scales
  cublasLtMatmulMatrixScale_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  cublasLtMatmulMatrixScale_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  // CUBLASLT_MATMUL_DESC_FAST_ACCUM: the tensor cores' fp8 sums without promotion into fp32
  // (faster, fewer bits), what kernels that never promote do.
  bool fast_accumulation = false;
};

// The heuristic has no algorithm for the matmul (it proposed none, or answered
// CUBLAS_STATUS_NOT_SUPPORTED): the configuration is outside the library, nothing failed.
class LtNoAlgorithm : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LtMatmul {
 public:
  // Creates the handle, descriptors and layouts and asks the heuristic; throws CublasError, or
  // LtNoAlgorithm when it has no algorithm for the shape (with these scales).
  explicit LtMatmul(const LtMatmulShape& shape, const std::optional<LtScales>& scales = {});

  std::size_t algorithm_count() const { return algorithms_.size(); }
  // Enqueues C = A * B^T with the algorithm of that index; workspace: kCublasLtWorkspaceBytes.
  void run(std::size_t index, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr workspace,
           CUstream stream) const;
  // The algorithm's id, tile, stages, split-K, ... (-1: unreadable) and its workspace.
  nlohmann::json facts(std::size_t index) const;
  const LtMatmulShape& shape() const { return shape_; }

 private:
  struct DestroyLt {
    void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
  };
  struct DestroyDesc {
    void operator()(cublasLtMatmulDesc_t d) const noexcept { cublasLtMatmulDescDestroy(d); }
  };
  struct DestroyLayout {
    void operator()(cublasLtMatrixLayout_t l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
  };
  LtMatmulShape shape_;
  cuda::UniqueHandle<cublasLtHandle_t, DestroyLt> handle_;
  cuda::UniqueHandle<cublasLtMatmulDesc_t, DestroyDesc> desc_;
  cuda::UniqueHandle<cublasLtMatrixLayout_t, DestroyLayout> a_layout_, b_layout_, c_layout_;
  std::vector<cublasLtMatmulHeuristicResult_t> algorithms_;
};

// Medians of flushed samples of each launch, taken in rounds over all of them (one round: each
// once), after the usual warm-up: what a choice among library algorithms rests on.
std::vector<double> time_in_rounds(const std::vector<std::function<void(CUstream)>>& launches,
                                   WorkerDevice& device);

// The index of the smallest median.
std::size_t fastest(const std::vector<double>& medians);

// Every index, fastest median first (ties keep the heuristic's order): the order in which a
// baseline falls back when its choice computes a wrong result.
std::vector<std::size_t> fastest_first(const std::vector<double>& medians);

}  // namespace kt
