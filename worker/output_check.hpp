// Checks what ran on a problem's buffers (a variant, or the baseline) against the fp32 reference
// computed on the same inputs: every element within the tolerance (validator.hpp), and no
// output's guard regions written. The reference output must already be in `expected`.
#pragma once

#include <string>

#include "tuner/measure_protocol.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"

namespace kt {

// The first damaged guard around the outputs (and how many more) in words; "" when all intact.
std::string guard_damage(const ProblemBuffers& buffers);

// Downloads the reference's output buffer and `expected` (output_elements() floats) and compares
// them; error.guard_damage names the first damaged guard, if any. Throws CudaError.
ErrorSummary check_output(const ProblemBuffers& buffers, const Reference& reference,
                          const cuda::DeviceBuffer& expected, const Tolerance& tolerance);

}  // namespace kt
