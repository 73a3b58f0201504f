// The GEMM baseline at its best, as a careful user (or PyTorch) runs it: cublasLt with a 32 MiB
// workspace. cublasLt's heuristic proposes up to 8 algorithms for the shape; each is timed here
// on this GPU (rounds over all of them, every sample after an L2 flush) and the fastest is kept.
// describe() names the one chosen (its index in the heuristic's list, algorithm id, tile, stages,
// split-K) and the selection times, so a result says exactly what it was compared with.
//
// params {"a","b","c": buffer names, "m","n","k": integers}; row-major C[m,n] = A[m,k] * B[n,k]^T
// with fp32 accumulation. In cuBLAS's column-major terms: C^T (n x m) = op_T(B) * A^T.
// Optional "algorithm_index": use that entry of the heuristic's list instead of choosing again;
// a job's final comparison reuses the algorithm its first pass chose on that GPU model, so one
// job compares against one baseline.
#pragma once

#include <memory>

#include "worker/baseline.hpp"

namespace kt {

inline constexpr std::size_t kCublasLtWorkspaceBytes = 32u << 20;
inline constexpr int kCublasLtHeuristicAlgorithms = 8;

std::unique_ptr<Baseline> make_cublaslt_gemm(const ProblemInstance& problem,
                                             const ProblemBuffers& buffers, WorkerDevice& device);

}  // namespace kt
