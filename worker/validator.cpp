#include "worker/validator.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

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

}  // namespace

ErrorSummary compare_with_reference(std::span<const std::byte> output, const std::string& dtype,
                                    std::span<const float> reference, double tolerance) {
  const OutputReader out(output, dtype);
  if (output.size() % out.element_bytes() != 0 || out.elements() != reference.size())
    throw std::invalid_argument(fmt::format("output holds {} bytes of {}, reference {} elements",
                                            output.size(), dtype, reference.size()));
  double ref_sq = 0, ref_max = 0;
  for (const float r : reference) {
    if (!std::isfinite(r)) continue;
    ref_sq += static_cast<double>(r) * r;
    ref_max = std::max(ref_max, static_cast<double>(std::abs(r)));
  }
  const double n = static_cast<double>(std::max<std::size_t>(reference.size(), 1));
  const double bad_threshold = 10.0 * tolerance * std::sqrt(ref_sq / n);

  ErrorSummary error;
  double diff_sq = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double o = out[i];
    const double r = reference[i];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      ++error.non_finite;
      if (error.first_bad_index < 0) error.first_bad_index = static_cast<std::int64_t>(i);
      continue;
    }
    const double d = std::abs(o - r);
    diff_sq += d * d;
    error.max_abs = std::max(error.max_abs, d);
    if (d > bad_threshold && error.first_bad_index < 0)
      error.first_bad_index = static_cast<std::int64_t>(i);
  }
  error.max_rel = ratio(error.max_abs, ref_max);
  error.rel_l2 = ratio(std::sqrt(diff_sq), std::sqrt(ref_sq));
  return error;
}

bool passes(const ErrorSummary& error, double tolerance) {
  return error.non_finite == 0 && error.rel_l2 <= tolerance;
}

std::string describe(const ErrorSummary& error, double tolerance) {
  std::string text = fmt::format("rel_l2 {:.3g} {} tolerance {:.3g}", error.rel_l2,
                                 error.rel_l2 <= tolerance ? "<=" : ">", tolerance);
  if (error.non_finite > 0) text += fmt::format(", {} non-finite", error.non_finite);
  if (error.first_bad_index >= 0)
    text += fmt::format(", first bad element {}", error.first_bad_index);
  text += fmt::format(" (max_abs {:.3g}, max_rel {:.3g})", error.max_abs, error.max_rel);
  return text;
}

}  // namespace kt
