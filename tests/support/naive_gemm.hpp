// A naive GEMM for the worker and measurement tests, C[m,n] = sum_k A[m,k] * B[n,k] in the GEMM
// family's argument order (C, A, B, M, N, K), one thread per element of C in 16x16 blocks, bf16
// or fp16, with a planted fault to choose: the worker must end each in its own state. The
// validation faults are small on purpose (one element, one tile, one element past the end of C,
// one NaN, one tile that dropped a K-block): what a per-element check and the guards around C
// must catch; and a split-K reduced in 16 bits, which it must not reject.
#pragma once

#include <string>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt::test {

enum class NaiveGemm {
  correct = 0,
  writes_zero,
  skips_last_row,
  far_out_of_bounds,
  loops_forever,
  one_wrong_element,    // C[M/2][N/2] is 1.0 too large
  one_wrong_tile,       // the 16x16 tile of block (1, 1), rows and columns 16..31, 1.0 too large
  writes_one_past_end,  // C right, plus 1.0 written to the element after C's last
  one_nan,              // C[0][N-1] is NaN
  // Correct within rounding: K in 16 slices, the partial sums and their running sum rounded to
  // the dtype (a split-K reduced in 16 bits), which only the magnitude term allows at large K.
  split_k_16bit,
  drops_k_block,  // the 16x16 tile of block (1, 1) leaves out the middle 64-wide block of K
};

// Every behaviour, for the tests that go through them all.
inline constexpr NaiveGemm kAllNaiveGemms[] = {
    NaiveGemm::correct,           NaiveGemm::writes_zero,         NaiveGemm::skips_last_row,
    NaiveGemm::far_out_of_bounds, NaiveGemm::loops_forever,       NaiveGemm::one_wrong_element,
    NaiveGemm::one_wrong_tile,    NaiveGemm::writes_one_past_end, NaiveGemm::one_nan,
    NaiveGemm::split_k_16bit,     NaiveGemm::drops_k_block};

inline constexpr const char* kNaiveGemmKernel = "test_gemm";

// The kernel with `behaviour` planted, for dtype "bf16" or "fp16" (arch left for the caller).
CompileRequest naive_gemm_compile(NaiveGemm behaviour, const std::string& dtype = "bf16");

// An m x n x k problem for it: buffers A, B (inputs) and C (output), the launch, and cuBLAS as the
// reference.
ProblemInstance naive_gemm_problem(int m, int n, int k, const std::string& dtype = "bf16");

// The GEMM family's tolerance for dtype (kernel_templates/gemm/manifest.json), what a job would
// check this kernel against.
Tolerance naive_gemm_tolerance(const std::string& dtype = "bf16");

}  // namespace kt::test
