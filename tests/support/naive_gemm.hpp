// A naive GEMM for the worker and measurement tests, C[m,n] = sum_k A[m,k] * B[n,k] in the GEMM
// family's argument order (C, A, B, M, N, K), one thread per element of C in 16x16 blocks, bf16
// or fp16, with a planted fault to choose: the worker must end each in its own state.
#pragma once

#include <string>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt::test {

enum class NaiveGemm { correct = 0, writes_zero, skips_last_row, far_out_of_bounds, loops_forever };

inline constexpr const char* kNaiveGemmKernel = "test_gemm";

// The kernel with `behaviour` planted, for dtype "bf16" or "fp16" (arch left for the caller).
CompileRequest naive_gemm_compile(NaiveGemm behaviour, const std::string& dtype = "bf16");

// An m x n x k problem for it: buffers A, B (inputs) and C (output), the launch, and cuBLAS as the
// reference.
ProblemInstance naive_gemm_problem(int m, int n, int k, const std::string& dtype = "bf16");

}  // namespace kt::test
