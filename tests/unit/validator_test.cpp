// The output check of the worker (worker/validator.hpp) on host data: every element against
// atol + rtol * |ref|, NaN/Inf, rel_l2 over the whole output, guard damage, and the one-line
// reason. The tolerances are the GEMM family's (kernel_templates/gemm/manifest.json).
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

constexpr Tolerance kBf16{0.03125, 0.0078125, 0.0078125};
constexpr Tolerance kFp16{0.03125, 0.0009765625, 0.0009765625};

Tolerance tolerance_of(const std::string& dtype) {
  return dtype == "bf16" ? kBf16 : kFp16;
}

// A random fp32 "reference" with GEMM-like magnitudes (K ~ 8192: |C| up to ~40).
std::vector<float> random_reference(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-40.0f, 40.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

std::uint16_t to_bits(float value, const std::string& dtype) {
  return dtype == "bf16" ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
}

std::vector<std::uint16_t> rounded(const std::vector<float>& values, const std::string& dtype) {
  std::vector<std::uint16_t> bits;
  for (float v : values) bits.push_back(to_bits(v, dtype));
  return bits;
}

std::span<const std::byte> bytes_of(const std::vector<std::uint16_t>& bits) {
  return std::as_bytes(std::span(bits));
}

std::span<const std::byte> bytes_of(const std::vector<float>& values) {
  return std::as_bytes(std::span(values));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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

class ValidatorByDtype : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& dtype() const { return GetParam(); }
  Tolerance tolerance() const { return tolerance_of(dtype()); }
};

TEST_P(ValidatorByDtype, RoundedReferencePassesAndKeepsItsTolerance) {
  const auto reference = random_reference(4096, 1);
  const auto output = rounded(reference, dtype());
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_TRUE(passes(e)) << describe(e);
  EXPECT_EQ(e.bad_elements, 0);
  EXPECT_EQ(e.non_finite, 0);
  EXPECT_EQ(e.first_bad_index, -1);
  ASSERT_TRUE(e.tolerance.has_value());
  EXPECT_EQ(*e.tolerance, tolerance());
  EXPECT_TRUE(e.guard_damage.empty());
  EXPECT_GT(e.rel_l2, 0);                                // rounding is visible ...
  EXPECT_LT(e.rel_l2, dtype() == "bf16" ? 3e-3 : 4e-4);  // ... and well inside the bound
  EXPECT_GT(e.max_abs, 0);
}

// A correct kernel that sums in another order (split-K: 8 fp32 partials added last to first)
// against a reference summed in order, both fp32, with bf16/fp16 inputs like the worker's.
TEST_P(ValidatorByDtype, ReorderedFp32AccumulationPasses) {
  constexpr int kOutputs = 256, kK = 8192, kSlices = 8;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto input = [&] {
    const float v = dist(rng);
    return dtype() == "bf16" ? bf16_bits_to_float(float_to_bf16_bits(v))
                             : fp16_bits_to_float(float_to_fp16_bits(v));
  };
  std::vector<float> reference;
  std::vector<std::uint16_t> output;
  for (int i = 0; i < kOutputs; ++i) {
    float in_order = 0;
    float slices[kSlices] = {};
    for (int k = 0; k < kK; ++k) {
      const float product = input() * input();
      in_order += product;
      slices[k * kSlices / kK] += product;
    }
    float split = 0;
    for (int s = kSlices - 1; s >= 0; --s) split += slices[s];
    reference.push_back(in_order);
    output.push_back(to_bits(split, dtype()));
  }
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_TRUE(passes(e)) << describe(e);
}

TEST_P(ValidatorByDtype, OneWrongElementFailsAndIsNamed) {
  auto reference = random_reference(10000, 4);
  reference[1234] = 30.0f;
  auto output = rounded(reference, dtype());
  output[1234] = to_bits(31.0f, dtype());  // +1.0 at a magnitude of 30: allowed is 0.27 or less
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_EQ(e.non_finite, 0);
  EXPECT_EQ(e.first_bad_index, 1234);
  EXPECT_EQ(e.first_bad_output, 31.0);
  EXPECT_EQ(e.first_bad_reference, 30.0);
  EXPECT_LE(e.rel_l2, tolerance().max_rel_l2);  // one element in 10000 hides in the L2 norm
  const std::string reason = describe(e);
  EXPECT_TRUE(contains(reason, "1 bad element (0 non-finite)")) << reason;
  EXPECT_TRUE(contains(reason, "first at 1234: got 31, expected 30")) << reason;
}

TEST_P(ValidatorByDtype, SignFlipFails) {
  auto reference = random_reference(1000, 5);
  reference[17] = -3.5f;
  auto output = rounded(reference, dtype());
  output[17] = to_bits(3.5f, dtype());
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_EQ(e.first_bad_index, 17);
}

TEST_P(ValidatorByDtype, OneNanFails) {
  const auto reference = random_reference(1000, 6);
  auto output = rounded(reference, dtype());
  output[500] = kPoison;
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_EQ(e.bad_elements, 1);  // non-finite elements count as bad too
  EXPECT_EQ(e.first_bad_index, 500);
  EXPECT_TRUE(std::isnan(e.first_bad_output));
  EXPECT_LT(e.rel_l2, tolerance().max_rel_l2);  // NaN stays out of the norms
  EXPECT_TRUE(contains(describe(e), "1 bad element (1 non-finite)")) << describe(e);
}

TEST_P(ValidatorByDtype, OneWrongTileFails) {
  // A 64 x 64 output whose 16 x 16 tile at block (1, 2) is off by 1 everywhere.
  constexpr int kN = 64;
  const auto reference = random_reference(kN * kN, 7);
  auto output = rounded(reference, dtype());
  for (int row = 16; row < 32; ++row)
    for (int col = 32; col < 48; ++col)
      output[row * kN + col] = to_bits(reference[row * kN + col] + 1.0f, dtype());
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  // |ref| <= 40 allows at most 0.03125 + 40 * 2^-7 = 0.34 (bf16): every element of the tile fails.
  EXPECT_EQ(e.bad_elements, 256);
  EXPECT_EQ(e.first_bad_index, 16 * kN + 32);
  EXPECT_TRUE(contains(describe(e), "256 bad elements")) << describe(e);
}

TEST_P(ValidatorByDtype, UnwrittenPoisonFails) {
  const auto reference = random_reference(1000, 2);
  auto output = rounded(reference, dtype());
  for (std::size_t i = 900; i < 1000; ++i) output[i] = kPoison;  // the last "row" never written
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  EXPECT_EQ(e.non_finite, 100);
  EXPECT_EQ(e.bad_elements, 100);
  EXPECT_EQ(e.first_bad_index, 900);
  EXPECT_LT(e.rel_l2, tolerance().max_rel_l2);  // the written part is right
  EXPECT_TRUE(contains(describe(e), "100 non-finite")) << describe(e);
}

TEST_P(ValidatorByDtype, ZeroOutputFails) {
  const auto reference = random_reference(1000, 3);
  const std::vector<std::uint16_t> output(1000, 0);
  const ErrorSummary e = compare_with_reference(bytes_of(output), dtype(), reference, tolerance());
  EXPECT_FALSE(passes(e));
  EXPECT_NEAR(e.rel_l2, 1.0, 1e-9);
  EXPECT_NEAR(e.max_rel, 1.0, 1e-6);
  EXPECT_EQ(e.non_finite, 0);
  EXPECT_GT(e.bad_elements, 990);  // all but the few references within atol of zero
  EXPECT_GE(e.first_bad_index, 0);
}

INSTANTIATE_TEST_SUITE_P(HalfDtypes, ValidatorByDtype, ::testing::Values("bf16", "fp16"));

// f32 outputs hold the edge values exactly: |out - ref| == atol + rtol * |ref| passes, the next
// float beyond it fails, on both sides of the reference.
TEST(Validator, ElementBoundIsAtolPlusRtolTimesRef) {
  // 30 +- (2^-5 + 30 * 2^-7) = 30 +- 0.265625, exactly representable.
  const std::vector<float> reference{30.0f, -30.0f, 0.0f};
  const float bound = 0.265625f;
  const std::vector<float> inside{30.0f + bound, -30.0f - bound, 0.03125f};
  ErrorSummary e = compare_with_reference(bytes_of(inside), "f32", reference, kBf16);
  EXPECT_EQ(e.bad_elements, 0) << describe(e);

  for (std::size_t i = 0; i < reference.size(); ++i) {
    std::vector<float> outside = inside;
    outside[i] = std::nextafter(inside[i], inside[i] >= reference[i] ? 100.0f : -100.0f);
    e = compare_with_reference(bytes_of(outside), "f32", reference, kBf16);
    EXPECT_EQ(e.bad_elements, 1) << i;
    EXPECT_EQ(e.first_bad_index, static_cast<std::int64_t>(i));
    EXPECT_FALSE(passes(e));
  }
  // Below the reference by the same amount.
  const std::vector<float> below{30.0f - bound, -30.0f + bound, -0.03125f};
  EXPECT_EQ(compare_with_reference(bytes_of(below), "f32", reference, kBf16).bad_elements, 0);
}

TEST(Validator, RelL2BoundIsStillEnforcedWhenEveryElementIsWithinItsOwn) {
  // Every element 0.7% high: inside rtol 2^-7 (0.78%) one by one, but a bias over all of C.
  const std::vector<float> reference(1000, 2.0f);
  const std::vector<float> output(1000, 2.0f * 1.007f);
  const Tolerance strict_l2{0.03125, 0.0078125, 0.004};
  const ErrorSummary e = compare_with_reference(bytes_of(output), "f32", reference, strict_l2);
  EXPECT_EQ(e.bad_elements, 0);
  EXPECT_NEAR(e.rel_l2, 0.007, 1e-6);
  EXPECT_FALSE(passes(e));
  const std::string reason = describe(e);
  EXPECT_TRUE(contains(reason, "every element within")) << reason;
  EXPECT_TRUE(contains(reason, "rel_l2 0.007 > 0.004")) << reason;
  // The same output against the manifest's bound passes.
  EXPECT_TRUE(passes(compare_with_reference(bytes_of(output), "f32", reference, kBf16)));
}

TEST(Validator, F32OutputAndExactMatch) {
  const auto reference = random_reference(100, 5);
  const ErrorSummary e = compare_with_reference(bytes_of(reference), "f32", reference, Tolerance{});
  EXPECT_EQ(e.rel_l2, 0);
  EXPECT_EQ(e.max_abs, 0);
  EXPECT_EQ(e.bad_elements, 0);
  EXPECT_TRUE(passes(e));  // an all-zero tolerance asks for an exact match, and it is one
}

TEST(Validator, InfinityCountsAsNonFinite) {
  const std::vector<float> reference{1, 2, 3};
  const std::vector<float> output{1, std::numeric_limits<float>::infinity(), 3};
  const ErrorSummary e = compare_with_reference(bytes_of(output), "f32", reference, kBf16);
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_EQ(e.bad_elements, 1);
  EXPECT_EQ(e.first_bad_index, 1);
  EXPECT_FALSE(passes(e));
}

// An exact result beyond the 16-bit range rounds to an infinity of its sign (a long fp16 dual
// GEMM overflowed where the fp32 reference did not): that infinity is the correct output, a
// finite value or an infinity of the other sign is not, and a NaN never is.
TEST(Validator, AnInfinityIsCorrectWhereTheExactResultOverflowsTheDtype) {
  const float inf = std::numeric_limits<float>::infinity();
  // 60000 is in range even with its bound (0.03 + 0.001 * 60000 below 65520, where fp16 rounds to
  // infinity); 65504 + its bound is not, and there either side is correct.
  const std::vector<float> reference{1.0f, 70000.0f, -1.0e6f, 60000.0f};
  const ErrorSummary ok = compare_with_reference(
      bytes_of(rounded({1.0f, inf, -inf, 60000.0f}, "fp16")), "fp16", reference, kFp16);
  EXPECT_EQ(ok.bad_elements, 0) << describe(ok);
  EXPECT_EQ(ok.non_finite, 0);
  EXPECT_TRUE(passes(ok)) << describe(ok);

  const ErrorSummary wrong_sign = compare_with_reference(
      bytes_of(rounded({1.0f, -inf, -inf, 60000.0f}, "fp16")), "fp16", reference, kFp16);
  EXPECT_EQ(wrong_sign.bad_elements, 1);
  EXPECT_FALSE(passes(wrong_sign));
  // In range: an infinity is wrong (the kernel overflowed where the result does not).
  const ErrorSummary in_range = compare_with_reference(
      bytes_of(rounded({1.0f, inf, -inf, inf}, "fp16")), "fp16", reference, kFp16);
  EXPECT_EQ(in_range.bad_elements, 1);
  EXPECT_EQ(in_range.first_bad_index, 3);
  std::vector<std::uint16_t> nan = rounded({1.0f, inf, -inf, 60000.0f}, "fp16");
  nan[1] = kPoison;
  EXPECT_FALSE(passes(compare_with_reference(bytes_of(nan), "fp16", reference, kFp16)));
  // bf16's range ends near 3.4e38: 70000 is far inside it.
  EXPECT_FALSE(passes(compare_with_reference(bytes_of(rounded({1.0f, inf, -inf, 60000.0f}, "bf16")),
                                             "bf16", reference, kBf16)));
  // At the edge of the range: 65504 within its bound reaches 65520, so an infinity is correct.
  EXPECT_TRUE(passes(compare_with_reference(bytes_of(rounded({inf}, "fp16")), "fp16",
                                            std::vector<float>{65504.0f}, kFp16)));
}

TEST(Validator, ZeroReferenceWithErrorIsInfinitelyWrong) {
  const std::vector<float> reference(4, 0.0f);
  const std::vector<float> output{0, 0, 1, 0};
  const ErrorSummary e = compare_with_reference(bytes_of(output), "f32", reference, kBf16);
  EXPECT_TRUE(std::isinf(e.rel_l2));
  EXPECT_EQ(e.first_bad_index, 2);
  EXPECT_FALSE(passes(e));
}

TEST(Validator, GuardDamageFailsACorrectOutputAndLeadsTheReason) {
  const auto reference = random_reference(100, 8);
  const auto output = rounded(reference, "bf16");
  ErrorSummary e = compare_with_reference(bytes_of(output), "bf16", reference, kBf16);
  ASSERT_TRUE(passes(e));
  e.guard_damage = "wrote past the end of C: guard after C damaged at byte 0";
  EXPECT_FALSE(passes(e));
  EXPECT_EQ(describe(e).rfind(e.guard_damage, 0), 0u) << describe(e);
}

TEST(Validator, SummaryWithoutToleranceDoesNotPass) {
  ErrorSummary old;  // as read back from before per-element checks
  old.bad_elements = 0;
  EXPECT_FALSE(passes(old));
  EXPECT_TRUE(contains(describe(old), "no tolerance"));
}

TEST(Validator, RejectsSizeMismatchAndUnknownDtype) {
  const std::vector<float> reference(10, 1.0f);
  const std::vector<std::uint16_t> short_output(9, 0);
  EXPECT_THROW(compare_with_reference(bytes_of(short_output), "bf16", reference, kBf16),
               std::invalid_argument);
  const std::vector<std::uint16_t> output(10, 0);
  EXPECT_THROW(compare_with_reference(bytes_of(output), "int4", reference, kBf16),
               std::invalid_argument);
}

}  // namespace
}  // namespace kt
