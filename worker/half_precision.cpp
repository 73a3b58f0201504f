#include "worker/half_precision.hpp"

#include <bit>
#include <cmath>

namespace kt {

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)  // Inf / NaN (the NaN payload is kept)
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {  // zero and subnormals: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // quiet
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);  // to nearest, ties to even
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint16_t float_to_fp16_bits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(value)) return sign | 0x7E00u;
  const float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return sign | 0x7C00u;  // rounds to Inf
  if (magnitude < 6.103515625e-05f) {
    // Subnormal range: units of 2^-24, rounded to nearest even by rint (default rounding mode).
    return sign | static_cast<std::uint16_t>(std::rint(std::ldexp(magnitude, 24)));
  }
  const std::uint32_t m = bits & 0x7FFFFFFFu;
  const std::uint32_t rounding = 0xFFFu + ((m >> 13) & 1u);
  const std::uint32_t rounded = m + rounding;  // may carry into the exponent: still correct
  return sign |
         static_cast<std::uint16_t>(((rounded >> 23) - 112u) << 10 | ((rounded >> 13) & 0x3FFu));
}

}  // namespace kt
