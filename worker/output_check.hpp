// Checks what ran on a problem's buffers (a variant, or the baseline) against the fp32 reference
// computed on the same inputs: every element within the tolerance (validator.hpp), and no
// output's guard regions written. The reference's results must already be computed
// (compute_reference).
#pragma once

#include <cuda.h>

#include <optional>
#include <string>

#include "tuner/measure_protocol.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"

namespace kt {

// What the reference computed on a problem's inputs: the fp32 output and, for a tolerance with a
// magnitude term, the magnitude m of every element (both output_elements() floats).
struct ReferenceResults {
  cuda::DeviceBuffer expected;
  std::optional<cuda::DeviceBuffer> magnitude;
};

// Computes the reference's output, and its magnitude when tolerance.magnitude > 0, on stream and
// waits for both. Throws std::invalid_argument when the tolerance has a magnitude term and the
// reference computes no magnitude, CudaError / CublasError when the GPU work fails.
ReferenceResults compute_reference(Reference& reference, const Tolerance& tolerance,
                                   CUstream stream);

// The first damaged guard around the outputs (and how many more) in words; "" when all intact.
std::string guard_damage(const ProblemBuffers& buffers);

// Downloads the reference's output buffer, the expected output and the magnitude (with a
// magnitude term) and compares them; error.guard_damage names the first damaged guard, if any.
// Throws CudaError, and std::invalid_argument when the tolerance has a magnitude term and
// `computed` holds no magnitude.
ErrorSummary check_output(const ProblemBuffers& buffers, const Reference& reference,
                          const ReferenceResults& computed, const Tolerance& tolerance);

}  // namespace kt
