#include "worker/validator.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "worker/half_precision.hpp"

namespace kt {
namespace {

// A random fp32 "reference" like a GEMM output, and its rounding to a 16-bit dtype.
std::vector<float> random_reference(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

std::vector<std::uint16_t> rounded(const std::vector<float>& values, const std::string& dtype) {
  std::vector<std::uint16_t> bits;
  for (float v : values)
    bits.push_back(dtype == "bf16" ? float_to_bf16_bits(v) : float_to_fp16_bits(v));
  return bits;
}

std::span<const std::byte> bytes_of(const std::vector<std::uint16_t>& bits) {
  return std::as_bytes(std::span(bits));
}

constexpr std::uint16_t kPoison = 0xFFFF;  // what cuMemsetD8(0xFF) leaves: NaN in bf16 and fp16

TEST(HalfPrecision, RoundTripsAndRoundsToNearestEven) {
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f)), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(-0.5f)), -0.5f);
  // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even -> 1.
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(1.0f)), 1.0f);
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(fp16_bits_to_float(float_to_fp16_bits(70000.0f))));
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(1.0f + 1.0f / 2048)), 1.0f);  // tie -> even
  EXPECT_EQ(float_to_fp16_bits(0.333251953125f), 0x3555);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(kPoison)));
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(kPoison)));
}

class ValidatorByDtype : public ::testing::TestWithParam<std::string> {};

TEST_P(ValidatorByDtype, RoundedReferencePasses) {
  const auto reference = random_reference(4096, 1);
  const auto output = rounded(reference, GetParam());
  const ErrorSummary e = compare_with_reference(bytes_of(output), GetParam(), reference, 1e-2);
  EXPECT_TRUE(passes(e, 1e-2));
  EXPECT_EQ(e.non_finite, 0);
  EXPECT_EQ(e.first_bad_index, -1);
  EXPECT_GT(e.rel_l2, 0);                                   // rounding is visible ...
  EXPECT_LT(e.rel_l2, GetParam() == "bf16" ? 4e-3 : 5e-4);  // ... and small
  EXPECT_GT(e.max_abs, 0);
  EXPECT_LE(e.max_rel, e.max_abs / 7.9);  // max|ref| is close to 8
}

TEST_P(ValidatorByDtype, UnwrittenPoisonFails) {
  const auto reference = random_reference(1000, 2);
  auto output = rounded(reference, GetParam());
  for (std::size_t i = 900; i < 1000; ++i) output[i] = kPoison;  // the last "row" never written
  const ErrorSummary e = compare_with_reference(bytes_of(output), GetParam(), reference, 1e-2);
  EXPECT_FALSE(passes(e, 1e-2));
  EXPECT_EQ(e.non_finite, 100);
  EXPECT_EQ(e.first_bad_index, 900);
  EXPECT_LT(e.rel_l2, 1e-2);  // the written part is right: only the poison count fails it
  EXPECT_NE(describe(e, 1e-2).find("100 non-finite"), std::string::npos);
}

TEST_P(ValidatorByDtype, ZeroOutputFails) {
  const auto reference = random_reference(1000, 3);
  const std::vector<std::uint16_t> output(1000, 0);
  const ErrorSummary e = compare_with_reference(bytes_of(output), GetParam(), reference, 1e-2);
  EXPECT_FALSE(passes(e, 1e-2));
  EXPECT_NEAR(e.rel_l2, 1.0, 1e-9);
  EXPECT_NEAR(e.max_rel, 1.0, 1e-6);
  EXPECT_EQ(e.non_finite, 0);
  EXPECT_GE(e.first_bad_index, 0);
}

TEST_P(ValidatorByDtype, OneBadElementIsFoundButSmallDriftPasses) {
  const auto reference = random_reference(10000, 4);
  auto output = rounded(reference, GetParam());
  const float off = reference[1234] + 6.0f;  // far beyond 10 * tol * rms(ref) ~ 0.46
  output[1234] = GetParam() == "bf16" ? float_to_bf16_bits(off) : float_to_fp16_bits(off);
  const ErrorSummary e = compare_with_reference(bytes_of(output), GetParam(), reference, 1e-2);
  EXPECT_EQ(e.first_bad_index, 1234);
  EXPECT_NEAR(e.max_abs, 6.0, 0.05);
  // A single element in 10000 moves rel_l2 by ~6/(4.6*100) ~ 1.3%: over a 1% tolerance.
  EXPECT_FALSE(passes(e, 1e-2));
  EXPECT_TRUE(passes(e, 2e-2));
}

INSTANTIATE_TEST_SUITE_P(HalfDtypes, ValidatorByDtype, ::testing::Values("bf16", "fp16"));

TEST(Validator, F32OutputAndExactMatch) {
  const auto reference = random_reference(100, 5);
  const ErrorSummary e =
      compare_with_reference(std::as_bytes(std::span(reference)), "f32", reference, 1e-6);
  EXPECT_EQ(e.rel_l2, 0);
  EXPECT_EQ(e.max_abs, 0);
  EXPECT_TRUE(passes(e, 1e-6));
}

TEST(Validator, InfinityCountsAsNonFinite) {
  const std::vector<float> reference{1, 2, 3};
  const std::vector<float> output{1, std::numeric_limits<float>::infinity(), 3};
  const ErrorSummary e =
      compare_with_reference(std::as_bytes(std::span(output)), "f32", reference, 1e-2);
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_EQ(e.first_bad_index, 1);
  EXPECT_FALSE(passes(e, 1e-2));
}

TEST(Validator, ZeroReferenceWithErrorIsInfinitelyWrong) {
  const std::vector<float> reference(4, 0.0f);
  const std::vector<float> output{0, 0, 1, 0};
  const ErrorSummary e =
      compare_with_reference(std::as_bytes(std::span(output)), "f32", reference, 1e-2);
  EXPECT_TRUE(std::isinf(e.rel_l2));
  EXPECT_FALSE(passes(e, 1e-2));
}

TEST(Validator, RejectsSizeMismatchAndUnknownDtype) {
  const std::vector<float> reference(10, 1.0f);
  const std::vector<std::uint16_t> short_output(9, 0);
  EXPECT_THROW(compare_with_reference(bytes_of(short_output), "bf16", reference, 1e-2),
               std::invalid_argument);
  const std::vector<std::uint16_t> output(10, 0);
  EXPECT_THROW(compare_with_reference(bytes_of(output), "int4", reference, 1e-2),
               std::invalid_argument);
}

}  // namespace
}  // namespace kt
