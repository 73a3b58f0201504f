// The worker's fill on the host (worker_inputs.hpp).
#include "support/worker_inputs.hpp"

#include <stdexcept>

#include "worker/half_precision.hpp"

namespace kt::test {
namespace {

// kt_mix64 of the support kernels: splitmix64's finalizer.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t worker_buffer_seed(std::uint64_t problem_seed, std::size_t buffer_index) {
  return problem_seed ^ ((buffer_index + 1) * 0xD1B54A32D192ED03ull);
}

float worker_uniform(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t bits = mix64(mix64(seed) ^ index);
  // The kernel's fp32 arithmetic, and every step of it exact (n * 2^-23 - 1 with n < 2^24 is a
  // multiple of 2^-23 below 1 in magnitude), so host and device agree bit for bit.
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
}

std::vector<float> worker_input(std::int64_t elements, const std::string& dtype,
                                std::uint64_t seed) {
  if (dtype != "bf16" && dtype != "fp16" && dtype != "f32")
    throw std::invalid_argument("the worker fills no '" + dtype + "' input with random values");
  std::vector<float> values(static_cast<std::size_t>(elements));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float value = worker_uniform(seed, i);
    if (dtype == "bf16")
      values[i] = bf16_bits_to_float(float_to_bf16_bits(value));
    else if (dtype == "fp16")
      values[i] = fp16_bits_to_float(float_to_fp16_bits(value));
    else
      values[i] = value;
  }
  return values;
}

}  // namespace kt::test
