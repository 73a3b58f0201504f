// The fp8 GEMM baseline "cublaslt_fp8_gemm": cuBLAS's own scaled fp8 matmul, as a careful user
// (or PyTorch's scaled matmul) runs it. C = (A dequantized) * (B dequantized)^T with fp32
// accumulation, the scales applied inside cublasLt's kernel; the heuristic's top 8 algorithms for
// a 32 MiB workspace are timed on this GPU and the fastest kept, as for cublaslt_gemm.
//
// params: Fp8GemmOperands's (gemm_operands.hpp: "a","b","c","scale_a","scale_b","m","n","k",
// optional "block_scaled") and an optional "algorithm_index" as for cublaslt_gemm.
//   per tensor: cublasLt's A and B scale pointers are scale_b and scale_a themselves (its A is
//     our B).
//   block_scaled: cuBLAS's Hopper block modes (cuBLAS documentation, "128-element 1D and 128x128
//     2D Block Scaling For FP8 Data Types", https://docs.nvidia.com/cuda/cublas/): A's 1x128
//     scales as VEC128_32F, which cuBLAS reads M-major, [cdiv(K,128)][M]: scale_a as given. B's
//     128x128 scales as BLK128x128_32F, which it reads K-major with every row of cdiv(K,128)
//     scales a multiple of 4 floats apart: scale_b as given when cdiv(K,128) is a multiple of 4,
//     else copied at construction with its rows padded (untimed; a baseline is built on prepared
//     inputs). Both layouts were checked against a host reference on an H200 (cuBLAS 13.1).
//
// What cuBLAS refuses (its heuristic, cuBLAS 13.1 on an H200): A and B both e5m2; K not a multiple
// of 16; N not a multiple of 8 (C's rows 16-byte aligned); block scaled also M not a multiple of 4
// and, by NVIDIA's word, any GPU but Hopper. Refused configurations throw std::invalid_argument
// naming the shape, the dtypes and the scaling, before anything runs.
#pragma once

#include <memory>
#include <vector>

#include "worker/baseline.hpp"

namespace kt {

std::unique_ptr<Baseline> make_cublaslt_fp8_gemm(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers,
                                                 WorkerDevice& device);

// B's 128x128 block scales ([n_blocks][k_blocks] row-major, the first n_blocks * k_blocks of
// `scales`) as BLK128x128_32F reads them: the same rows, round_up(k_blocks, 4) floats apart,
// zeros in between.
std::vector<float> blk128x128_scales(const std::vector<float>& scales, int n_blocks, int k_blocks);

}  // namespace kt
