// The baseline a variant's speedup is measured against: what a careful user runs without
// kerntune, at its best (family manifest "baseline"). It runs on the variant's own buffers and
// writes the family's output, so it is timed by exactly the same protocol as a variant.
//
// "cublaslt_gemm" (cublaslt_gemm.hpp): cublasLt with a 32 MiB workspace, the best of the top 8
// algorithms of its heuristic for the shape, chosen by timing each on this GPU.
// "cublaslt_fp8_gemm" (cublaslt_fp8_gemm.hpp): the same for a scaled fp8 GEMM, per-tensor or
// block scales (1x128 for A, 128x128 for B) applied by cublasLt itself.
// "unfused_dual_gemm_silu" (unfused_dual_gemm.hpp): two batched cublasLt GEMMs and an element-wise
// silu(gate) * up kernel. A family without
// an in-process baseline falls back to its reference's own-dtype run (e.g. cublasGemmEx), and
// says so in describe().
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/measure_protocol.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/worker_device.hpp"

namespace kt {

class Baseline {
 public:
  virtual ~Baseline() = default;
  // Enqueues one run on stream, output in the problem's dtype into the family's output buffer.
  virtual void launch(CUstream stream) = 0;
  // What runs: {"kind": ..., and for a library the algorithm chosen and how it was chosen}.
  virtual nlohmann::json describe() const = 0;
  // The current choice computed a wrong result (why): a library baseline moves to its next-fastest
  // candidate and lists the rejected one in describe() ("rejected"). False when no candidate is
  // left (or the choice was given, as in a final comparison): the baseline failed validation.
  virtual bool reject_and_try_next(const std::string& why) { return false; }
};

// Builds the problem's baseline on its buffers (inputs must already be prepared: a library
// baseline picks its algorithm by timing runs on them). Throws std::invalid_argument for an
// unknown kind or bad params, CublasError / CudaError when the library or the driver fails.
std::unique_ptr<Baseline> make_baseline(const ProblemInstance& problem,
                                        const ProblemBuffers& buffers, WorkerDevice& device);

}  // namespace kt
