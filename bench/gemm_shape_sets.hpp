// Named shape sets of kt-bench gemm (--shape-set): "square" (the nine of square_set_shapes:
// square 2048^3 to 8192^3 and the skinny M x 4096 x 7168), "models" (shapes from public models:
// vocabulary projections with even and odd N, decode shapes, ragged M, small N, unaligned K) and
// "all" (both, square first); "fp8" (for --fp8-scaling: DeepGEMM's dense set, M 64, 128 and 4096
// on six N x K of DeepSeek-V3's layers, plus 4096^3 and 8192^3). Each shape carries its
// budget and job timeout, sized from the tuning wall times of bench/results/2026-11-25-*-gemm so
// that "all" at --repeat 1 takes about 8 minutes of one H100 (less on an H200).
#pragma once

#include <string>
#include <vector>

#include "bench/result_names.hpp"

namespace kt::bench {

inline constexpr const char* kSquareSet = "square";
inline constexpr const char* kModelsSet = "models";
inline constexpr const char* kFp8Set = "fp8";

// square, models, all.
std::vector<std::string> gemm_shape_set_names();

// The set's shapes, each with its set name, budget and timeout; std::invalid_argument naming
// the known sets for any other name.
std::vector<GemmShape> gemm_shape_set(const std::string& name);

// The real-model shapes, with budgets and timeouts.
std::vector<GemmShape> model_shapes();

// The fp8 set's shapes, with budgets and timeouts.
std::vector<GemmShape> fp8_shapes();

}  // namespace kt::bench
