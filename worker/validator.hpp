// Compares a kernel's output (copied to the host) with the fp32 reference. Pure host code.
//
// Every element is checked: it is bad when it is not finite (unwritten poison is NaN) or
// |out - ref| > atol + rtol * |ref|, with the family's tolerance for the dtype (the manifest's
// tolerance.<dtype>; kernel_templates/README.md says how the values were chosen). rtol covers the
// rounding of the fp32 result to the output dtype, atol what reordered fp32 accumulation moves a
// value near zero. Over the whole output, rel_l2 = ||out - ref|| / ||ref|| must also stay within
// max_rel_l2: that catches a small error made everywhere, which no single element shows.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "tuner/measure_protocol.hpp"

namespace kt {

// output: the raw bytes of `elements` values of dtype "bf16", "fp16" or "f32". The summary keeps
// the tolerance it was checked against. Throws std::invalid_argument on an unknown dtype or a size
// mismatch with the reference.
ErrorSummary compare_with_reference(std::span<const std::byte> output, const std::string& dtype,
                                    std::span<const float> reference, const Tolerance& tolerance);

// True iff no element is bad (none non-finite), rel_l2 <= tolerance.max_rel_l2 and no guard was
// damaged. A summary without a tolerance (read from before per-element checks) does not pass.
bool passes(const ErrorSummary& error);

// One line for the stored reason, e.g. "1 bad element (0 non-finite) outside |out - ref| <= 0.031
// + 0.0078 * |ref|, first at 1507: got 31.5, expected 30.5; rel_l2 0.0024 <= 0.0078 (max_abs 1,
// max_rel 0.0064)", with the guard damage, if any, first.
std::string describe(const ErrorSummary& error);

}  // namespace kt
