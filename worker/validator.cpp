// The per-element and whole-output checks of a kernel's output against the fp32 reference
// (validator.hpp).
#include "worker/validator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "tuner/error_bound.hpp"
#include "worker/half_precision.hpp"

namespace kt {
namespace {

// Reads element i of the output as float.
class OutputReader {
 public:
  OutputReader(std::span<const std::byte> bytes, const std::string& dtype) : bytes_(bytes) {
    if (dtype == "bf16")
      kind_ = Kind::bf16;
    else if (dtype == "fp16")
      kind_ = Kind::fp16;
    else if (dtype == "f32")
      kind_ = Kind::f32;
    else
      throw std::invalid_argument("cannot validate an output of dtype '" + dtype + "'");
  }

  std::size_t elements() const { return bytes_.size() / element_bytes(); }
  std::size_t element_bytes() const { return kind_ == Kind::f32 ? 4 : 2; }

  // The largest finite value of the dtype plus half its ulp: an exact result at or beyond it
  // rounds to infinity (IEEE round to nearest).
  double overflow_threshold() const {
    switch (kind_) {
      case Kind::bf16: return 0x1.FEp127 + 0x1p119;  // 3.3895e38 + half an ulp
      case Kind::fp16: return 65504.0 + 16.0;
      case Kind::f32: break;
    }
    return 0x1.FFFFFEp127 + 0x1p103;
  }

  float operator[](std::size_t i) const {
    if (kind_ == Kind::f32) {
      float value;
      std::memcpy(&value, bytes_.data() + i * 4, 4);
      return value;
    }
    std::uint16_t bits;
    std::memcpy(&bits, bytes_.data() + i * 2, 2);
    return kind_ == Kind::bf16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
  }

 private:
  enum class Kind { bf16, fp16, f32 };
  std::span<const std::byte> bytes_;
  Kind kind_ = Kind::f32;
};

double ratio(double numerator, double denominator) {
  if (numerator == 0) return 0;
  if (denominator == 0) return std::numeric_limits<double>::infinity();
  return numerator / denominator;
}

// "0.0312 + 0.00781 * |ref|", and with a magnitude term " + 16 * u * m (m = |A|*|B|^T, u =
// 2^-8/sqrt(16384) + 2^-24 = 3.06e-05)".
std::string bound_text(const Tolerance& t, const std::optional<MagnitudeBound>& term) {
  std::string text = fmt::format("{:.3g} + {:.3g} * |ref|", t.atol, t.rtol);
  if (!term) return text;
  text += fmt::format(" + {:.3g} * u * m (m = {}, u = 2^{}", term->c, term->magnitude,
                      std::ilogb(term->u_out));
  if (term->reduction != 1) text += fmt::format("/sqrt({})", term->reduction);
  return text + fmt::format(" + 2^{} = {:.3g})", std::ilogb(term->u_acc), term->u);
}

}  // namespace

ErrorSummary compare_with_reference(std::span<const std::byte> output, const std::string& dtype,
                                    std::span<const float> reference, const Tolerance& tolerance,
                                    const std::optional<ReferenceMagnitude>& magnitude) {
  const OutputReader out(output, dtype);
  if (output.size() % out.element_bytes() != 0 || out.elements() != reference.size())
    throw std::invalid_argument(fmt::format("output holds {} bytes of {}, reference {} elements",
                                            output.size(), dtype, reference.size()));
  const bool has_term = tolerance.magnitude > 0;
  if (has_term && !magnitude)
    throw std::invalid_argument(fmt::format(
        "the tolerance has a magnitude term (c = {}) but the reference computed no magnitude",
        tolerance.magnitude));
  if (has_term && magnitude->values.size() != reference.size())
    throw std::invalid_argument(fmt::format("magnitude holds {} elements, reference {}",
                                            magnitude->values.size(), reference.size()));
  ErrorSummary error;
  error.tolerance = tolerance;
  error.bad_elements = 0;
  error.max_bound_fraction = 0;
  // c * u: what the magnitude of an element adds to its bound.
  double per_magnitude = 0;
  if (has_term) {
    error.magnitude_bound =
        magnitude_bound(tolerance, dtype, magnitude->reduction, magnitude->what);
    per_magnitude = error.magnitude_bound->c * error.magnitude_bound->u;
  }
  double diff_sq = 0, ref_sq = 0, ref_max = 0;
  auto mark_bad = [&error](std::size_t i, double o, double r, double m, double allowed) {
    ++error.bad_elements;
    if (error.first_bad_index >= 0) return;
    error.first_bad_index = static_cast<std::int64_t>(i);
    error.first_bad_output = o;
    error.first_bad_reference = r;
    error.first_bad_magnitude = m;
    error.first_bad_allowed = allowed;
  };
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double o = out[i];
    const double r = reference[i];
    const double m = has_term ? magnitude->values[i] : 0.0;
    const double allowed = tolerance.atol + tolerance.rtol * std::abs(r) + per_magnitude * m;
    // A result beyond the dtype's range is an infinity of its sign, exactly as IEEE rounds it: a
    // 16-bit output of a long reduction can overflow where the fp32 reference does not. Within
    // the bound of the threshold, either side of it is correct.
    if (std::isinf(o) && std::isfinite(r) && std::signbit(o) == std::signbit(r) &&
        std::abs(r) + allowed >= out.overflow_threshold())
      continue;
    if (!std::isfinite(o) || !std::isfinite(r) || !std::isfinite(m)) {
      ++error.non_finite;
      mark_bad(i, o, r, m, allowed);
      continue;
    }
    const double d = std::abs(o - r);
    diff_sq += d * d;
    ref_sq += r * r;
    ref_max = std::max(ref_max, std::abs(r));
    error.max_abs = std::max(error.max_abs, d);
    error.max_bound_fraction = std::max(error.max_bound_fraction, ratio(d, allowed));
    if (d > allowed) mark_bad(i, o, r, m, allowed);
  }
  error.max_rel = ratio(error.max_abs, ref_max);
  error.rel_l2 = ratio(std::sqrt(diff_sq), std::sqrt(ref_sq));
  return error;
}

bool passes(const ErrorSummary& error) {
  // rel_l2 may be NaN or Inf: the comparison is then false and the output fails.
  return error.tolerance.has_value() && error.non_finite == 0 && error.bad_elements == 0 &&
         error.guard_damage.empty() && error.rel_l2 <= error.tolerance->max_rel_l2;
}

std::string describe(const ErrorSummary& error) {
  std::string text;
  if (!error.guard_damage.empty()) text = error.guard_damage + "; ";
  if (!error.tolerance) {
    text += "checked against no tolerance";
  } else {
    const Tolerance& t = *error.tolerance;
    const std::string bound = bound_text(t, error.magnitude_bound);
    if (error.bad_elements > 0) {
      text += fmt::format(
          "{} bad element{} ({} non-finite) outside |out - ref| <= {}, first at {}: got {:.6g}, "
          "expected {:.6g}",
          error.bad_elements, error.bad_elements == 1 ? "" : "s", error.non_finite, bound,
          error.first_bad_index, error.first_bad_output, error.first_bad_reference);
      if (error.magnitude_bound)
        text += fmt::format(" (m {:.3g}, allowed {:.3g})", error.first_bad_magnitude,
                            error.first_bad_allowed);
      text += "; ";
    } else if (error.bad_elements == 0) {
      text += fmt::format("every element within {}; ", bound);
    }
    text += fmt::format("rel_l2 {:.3g} {} {:.3g}", error.rel_l2,
                        error.rel_l2 <= t.max_rel_l2 ? "<=" : ">", t.max_rel_l2);
  }
  text += fmt::format(" (max_abs {:.3g}, max_rel {:.3g}", error.max_abs, error.max_rel);
  if (error.max_bound_fraction >= 0)
    text += fmt::format(", {:.2g} of the bound at most", error.max_bound_fraction);
  return text + ")";
}

}  // namespace kt
