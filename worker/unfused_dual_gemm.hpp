// The dual GEMM baseline "unfused_dual_gemm_silu": what a user runs without kerntune. Two
// cublasLt GEMMs in the problem's dtype (fp32 accumulation, 16-bit outputs: gate = A B1^T and
// up = A B2^T), each one strided-batched call over the G groups with a 32 MiB workspace and the
// fastest of its heuristic's top 8 algorithms on this GPU (cublaslt_matmul.hpp), then the
// element-wise silu(gate) * up kernel (support_kernels.hpp) into the family's output. gate and up
// live in the baseline's own buffers, as a framework's temporaries would.
//
// params {"a","b1","b2","c": buffer names, "g","m","n","k": integers}; optional
// "gate_algorithm_index" and "up_algorithm_index" fix the choice (a job's final comparison reuses
// its first pass's).
#pragma once

#include <memory>

#include "worker/baseline.hpp"

namespace kt {

std::unique_ptr<Baseline> make_unfused_dual_gemm(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers,
                                                 WorkerDevice& device);

}  // namespace kt
