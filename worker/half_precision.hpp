// bf16 / fp16 <-> float on the host, bit-exact (round to nearest even, NaN stays NaN): the
// validator reads kernel outputs with it and tests build synthetic data with it.
#pragma once

#include <cstdint>

namespace kt {

float bf16_bits_to_float(std::uint16_t bits);
float fp16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16_bits(float value);
std::uint16_t float_to_fp16_bits(float value);

}  // namespace kt
