// The measurement worker's random inputs, computed on the host bit for bit: what
// kt_fill_uniform (worker/support_kernels.cpp) writes into a bf16/fp16/f32 input buffer, with the
// per-buffer seed ProblemBuffers::prepare gives it. Host tests of the validation use the same
// distribution a real check sees (uniform in [-1, 1), rounded to the dtype); a GPU test holds
// this copy to the kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kt::test {

// The seed ProblemBuffers::prepare fills the input at position `buffer_index` of a problem's
// buffers with, for the problem's seed.
std::uint64_t worker_buffer_seed(std::uint64_t problem_seed, std::size_t buffer_index);

// Element `index` of a buffer filled with `seed`, as the fill computes it in fp32 (before the
// rounding to a 16-bit dtype): 24 random bits scaled to [-1, 1).
float worker_uniform(std::uint64_t seed, std::uint64_t index);

// `elements` values as the fill writes them for dtype "bf16", "fp16" or "f32" (rounded to the
// nearest even), widened to float. Throws std::invalid_argument for another dtype.
std::vector<float> worker_input(std::int64_t elements, const std::string& dtype,
                                std::uint64_t seed);

}  // namespace kt::test
