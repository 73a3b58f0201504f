// Compares a kernel's output (copied to the host) with the fp32 reference. Pure host code.
//
// rel_l2 = ||out - ref|| / ||ref|| over the elements; max_rel = max|out - ref| / max|ref|. An
// element is bad when it is non-finite (unwritten poison is NaN) or off by more than
// 10 * tolerance * rms(ref): far outside what rounding explains. The output passes iff no element
// is non-finite and rel_l2 <= tolerance.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "tuner/measure_protocol.hpp"

namespace kt {

// output: the raw bytes of `elements` values of dtype "bf16", "fp16" or "f32". Throws
// std::invalid_argument on an unknown dtype or a size mismatch with the reference.
ErrorSummary compare_with_reference(std::span<const std::byte> output, const std::string& dtype,
                                    std::span<const float> reference, double tolerance);

bool passes(const ErrorSummary& error, double tolerance);

// One line for the stored reason: "rel_l2 0.53 > tolerance 0.01, 12 non-finite, first bad
// element 67 (max_abs 1.9, max_rel 0.21)".
std::string describe(const ErrorSummary& error, double tolerance);

}  // namespace kt
