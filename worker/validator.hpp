// Compares a kernel's output (copied to the host) with the fp32 reference. Pure host code.
//
// Every element is checked: it is bad when it is not finite (unwritten poison is NaN) or
// |out - ref| > atol + rtol * |ref| + c * u * m, with the family's tolerance for the dtype (the
// manifest's tolerance.<dtype>; kernel_templates/README.md says how the values were chosen). rtol
// covers the rounding of the fp32 result to the output dtype, atol what reordered fp32
// accumulation moves a value near zero, and the magnitude term (when the tolerance has a c) the
// rounding of partial sums, which grows with the magnitude m of what the element sums and with
// its reduction length K, not with |ref| (cancellation can bring |ref| near zero):
// u = u(dtype, K), tuner/error_bound.hpp. Over the whole output, rel_l2 = ||out - ref|| / ||ref||
// must also stay within max_rel_l2: that catches a small error made everywhere, which no single
// element shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tuner/measure_protocol.hpp"

namespace kt {

// What the reference computed as the magnitude m of every element (one value per reference
// element), the reduction length K and what m is ("|A|*|B|^T").
struct ReferenceMagnitude {
  std::span<const float> values;
  std::int64_t reduction = 1;
  std::string what;
};

// output: the raw bytes of `elements` values of dtype "bf16", "fp16" or "f32". The summary keeps
// the tolerance it was checked against and, with a magnitude term, its constants. Throws
// std::invalid_argument on an unknown dtype, a size mismatch with the reference, or a tolerance
// with a magnitude term (tolerance.magnitude > 0) and no magnitude; without a term the magnitude
// is not used. An element whose magnitude is not finite is bad (a broken reference must not pass
// anything).
ErrorSummary compare_with_reference(
    std::span<const std::byte> output, const std::string& dtype, std::span<const float> reference,
    const Tolerance& tolerance, const std::optional<ReferenceMagnitude>& magnitude = std::nullopt);

// True iff no element is bad (none non-finite), rel_l2 <= tolerance.max_rel_l2 and no guard was
// damaged. A summary without a tolerance (read from before per-element checks) does not pass.
bool passes(const ErrorSummary& error);

// One line for the stored reason, e.g. "1 bad element (0 non-finite) outside |out - ref| <= 0.0312
// + 0.00781 * |ref| + 16 * u * m (m = |A|*|B|^T, u = 2^-8/sqrt(16384) + 2^-24 = 3.06e-05), first
// at 1507: got 31.5, expected 30.5 (m 4.1e+03, allowed 2.27); rel_l2 0.0024 <= 0.0078 (max_abs 1,
// max_rel 0.0064, 1.2 of the bound at most)", with the guard damage, if any, first.
std::string describe(const ErrorSummary& error);

}  // namespace kt
