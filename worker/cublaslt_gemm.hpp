// The GEMM baseline at its best, as a careful user (or PyTorch) runs it: cublasLt with a 32 MiB
// workspace. cublasLt's heuristic proposes up to 8 algorithms for the shape; each is timed here
// on this GPU (cublaslt_matmul.hpp) and the fastest is kept. describe() names the one chosen (its
// index in the heuristic's list, algorithm id, tile, stages, split-K) and the selection times,
// so a result says exactly what it was compared with.
//
// params {"a","b","c": buffer names, "m","n","k": integers}; row-major C[m,n] = A[m,k] * B[n,k]^T
// with fp32 accumulation. Optional "algorithm_index": use that entry of the heuristic's list
// instead of choosing again; a job's final comparison reuses the algorithm its first pass chose
// on that GPU model, so one job compares against one baseline.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/baseline.hpp"
#include "worker/cublaslt_matmul.hpp"

namespace kt {

std::unique_ptr<Baseline> make_cublaslt_gemm(const ProblemInstance& problem,
                                             const ProblemBuffers& buffers, WorkerDevice& device);

// A baseline param "<name>" that fixes an algorithm index in [0, kCublasLtHeuristicAlgorithms),
// if present; std::invalid_argument naming `kind` otherwise.
std::optional<std::size_t> fixed_algorithm(const nlohmann::json& params, const std::string& name,
                                           const std::string& kind);

}  // namespace kt
