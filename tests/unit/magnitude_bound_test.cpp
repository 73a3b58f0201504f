// The per-element bound's magnitude term (tuner/error_bound.hpp) on host-computed GEMMs: the
// worker's inputs (uniform in [-1, 1), rounded to bf16/fp16, tests/support/worker_inputs.hpp), an
// exact fp64 reference and m = |A| |B|^T, checked by the worker's validator with the gemm
// family's tolerance (kernel_templates/gemm/manifest.json). A split-K kernel whose partial sums
// and their reduction are rounded to 16 bits must pass at K = 16384, where the bound without the
// term rejects it; every planted fault (one element off, one tile that dropped a 64-wide K-block,
// a NaN, a damaged guard) must fail at every K from 64 to 16384.
#include "tuner/error_bound.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/worker_inputs.hpp"
#include "worker/half_precision.hpp"
#include "worker/validator.hpp"

namespace kt {
namespace {

// kernel_templates/gemm/manifest.json's tolerance.
Tolerance gemm_tolerance(const std::string& dtype) {
  if (dtype == "fp16") return {0.03125, 0x1p-10, 0x1p-10, 16};
  return {0.03125, 0x1p-7, 0x1p-7, 16};
}

// Odd extents, like the shape the bound without the term failed on.
constexpr int kRows = 29, kCols = 37;
constexpr int kBlockK = 64;  // the K-block a faulty tile drops

float round_to(float value, const std::string& dtype) {
  return dtype == "bf16" ? bf16_bits_to_float(float_to_bf16_bits(value))
                         : fp16_bits_to_float(float_to_fp16_bits(value));
}

std::uint16_t bits_of(float value, const std::string& dtype) {
  return dtype == "bf16" ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
}

// C[kRows, kCols] = A[kRows, K] B[kCols, K]^T on the worker's inputs for one dtype and K.
struct HostGemm {
  std::string dtype;
  int k = 0;
  std::vector<float> a, b;       // the inputs, as the worker fills them
  std::vector<float> reference;  // exact (fp64) sums, rounded once to fp32
  std::vector<float> magnitude;  // (|A| |B|^T)_ij, likewise

  HostGemm(std::string dtype_, int k_) : dtype(std::move(dtype_)), k(k_) {
    constexpr std::uint64_t kSeed = 0x5EED;
    a = test::worker_input(std::int64_t{kRows} * k, dtype, test::worker_buffer_seed(kSeed, 0));
    b = test::worker_input(std::int64_t{kCols} * k, dtype, test::worker_buffer_seed(kSeed, 1));
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kCols; ++j) {
        double sum = 0, magnitude_sum = 0;
        for (int x = 0; x < k; ++x) {
          const double product = double(a[i * std::size_t(k) + x]) * b[j * std::size_t(k) + x];
          sum += product;
          magnitude_sum += std::abs(product);
        }
        reference.push_back(static_cast<float>(sum));
        magnitude.push_back(static_cast<float>(magnitude_sum));
      }
  }

  // A[i, first..last) . B[j, first..last) accumulated in fp32 in k order: what one thread's FMA
  // chain over that range gives (products of 16-bit values are exact in fp32).
  float fp32_sum(int i, int j, int first, int last) const {
    float acc = 0;
    for (int x = first; x < last; ++x)
      acc = std::fma(a[i * std::size_t(k) + x], b[j * std::size_t(k) + x], acc);
    return acc;
  }

  // A kernel's output in the dtype's bits, element by element.
  template <typename Element>
  std::vector<std::uint16_t> output(Element&& element) const {
    std::vector<std::uint16_t> bits;
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kCols; ++j) bits.push_back(bits_of(element(i, j), dtype));
    return bits;
  }

  // The correct fp32 result of each element rounded to the dtype.
  std::vector<std::uint16_t> correct() const {
    return output([&](int i, int j) { return fp32_sum(i, j, 0, k); });
  }

  // Split-K with `slices` slices whose fp32 partial sums are rounded to the dtype and added one
  // after another with every running sum rounded to the dtype too: the most 16-bit roundings a
  // split-K reduction in the output type makes.
  std::vector<std::uint16_t> split_k_16bit(int slices) const {
    return output([&](int i, int j) {
      float sum = 0;
      for (int s = 0; s < slices; ++s) {
        const float partial = round_to(fp32_sum(i, j, s * k / slices, (s + 1) * k / slices), dtype);
        sum = s == 0 ? partial : round_to(sum + partial, dtype);
      }
      return sum;
    });
  }

  ErrorSummary check(const std::vector<std::uint16_t>& output, const Tolerance& tolerance) const {
    return compare_with_reference(std::as_bytes(std::span(output)), dtype, reference, tolerance,
                                  ReferenceMagnitude{magnitude, k, kGemmMagnitude});
  }
  ErrorSummary check(const std::vector<std::uint16_t>& output) const {
    return check(output, gemm_tolerance(dtype));
  }

  // Whether a single wrong value at element `index` is a bad element: the element checked by
  // itself against its own reference and magnitude (the per-element bound alone; rel_l2 over one
  // element would say nothing about the whole output).
  bool catches(std::size_t index, float wrong) const {
    const std::uint16_t bits = bits_of(wrong, dtype);
    return 0 < (compare_with_reference(
                    std::as_bytes(std::span(&bits, 1)), dtype,
                    std::span(reference).subspan(index, 1), gemm_tolerance(dtype),
                    ReferenceMagnitude{std::span(magnitude).subspan(index, 1), k, kGemmMagnitude})
                    .bad_elements);
  }
};

// Each (dtype, K) is computed once for every test that uses it.
const HostGemm& host_gemm(const std::string& dtype, int k) {
  static std::map<std::pair<std::string, int>, HostGemm> cache;
  auto it = cache.find({dtype, k});
  if (it == cache.end()) it = cache.emplace(std::pair(dtype, k), HostGemm(dtype, k)).first;
  return it->second;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MagnitudeUnitRoundoff, IsTheOutputsOverSqrtKPlusTheAccumulations) {
  EXPECT_EQ(unit_roundoff("bf16"), 0x1p-8);
  EXPECT_EQ(unit_roundoff("fp16"), 0x1p-11);
  EXPECT_EQ(unit_roundoff("f32"), 0x1p-24);
  EXPECT_THROW(unit_roundoff("i32"), std::invalid_argument);
  EXPECT_EQ(magnitude_unit_roundoff("bf16", 16384), 0x1p-8 / 128 + 0x1p-24);
  EXPECT_EQ(magnitude_unit_roundoff("fp16", 64), 0x1p-11 / 8 + 0x1p-24);
  EXPECT_EQ(magnitude_unit_roundoff("bf16", 1), 0x1p-8 + 0x1p-24);  // attention: no sqrt(K)
  EXPECT_THROW(magnitude_unit_roundoff("bf16", 0), std::invalid_argument);

  const MagnitudeBound bound = magnitude_bound(gemm_tolerance("bf16"), "bf16", 4096, "|A|*|B|^T");
  EXPECT_EQ(bound.c, 16);
  EXPECT_EQ(bound.u, 0x1p-8 / 64 + 0x1p-24);
  EXPECT_EQ(bound.u_out, 0x1p-8);
  EXPECT_EQ(bound.u_acc, 0x1p-24);
  EXPECT_EQ(bound.reduction, 4096);
  EXPECT_EQ(bound.magnitude, "|A|*|B|^T");
}

class MagnitudeBoundByDtype : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& dtype() const { return GetParam(); }
};

// (a) Split-K with 16-bit partial sums at K = 16384, odd M and N: accepted with the term, and the
// bound without it (what rejected cuBLASLt's split-K algorithm) rejects the 16-slice one.
TEST_P(MagnitudeBoundByDtype, SplitKWith16BitPartialSumsPassesAtK16384) {
  const HostGemm& gemm = host_gemm(dtype(), 16384);
  for (int slices : {4, 8, 16}) {
    const ErrorSummary e = gemm.check(gemm.split_k_16bit(slices));
    EXPECT_TRUE(passes(e)) << slices << " slices: " << describe(e);
    EXPECT_LT(e.max_bound_fraction, 1.0) << slices << " slices";
    std::printf("  %s split-K %2d slices, K 16384: rel_l2 %.3g, %.2f of the bound at most\n",
                dtype().c_str(), slices, e.rel_l2, e.max_bound_fraction);
  }
  Tolerance without_term = gemm_tolerance(dtype());
  without_term.magnitude = 0;
  const ErrorSummary old = gemm.check(gemm.split_k_16bit(16), without_term);
  if (dtype() == "bf16") {
    EXPECT_FALSE(passes(old)) << describe(old);
  }
  std::printf("  %s split-K 16 slices without the term: %lld bad elements of %d\n", dtype().c_str(),
              static_cast<long long>(old.bad_elements), kRows * kCols);
}

// (c) A correct kernel (one fp32 chain per element, rounded to the dtype) passes at every K, and
// the stored summary says what the bound was.
TEST_P(MagnitudeBoundByDtype, CorrectFp32ResultRoundedToTheDtypePassesAtEveryK) {
  for (int k : {64, 1024, 16384}) {
    const HostGemm& gemm = host_gemm(dtype(), k);
    const ErrorSummary e = gemm.check(gemm.correct());
    EXPECT_TRUE(passes(e)) << "K " << k << ": " << describe(e);
    ASSERT_TRUE(e.magnitude_bound.has_value());
    EXPECT_EQ(e.magnitude_bound->reduction, k);
    EXPECT_EQ(e.magnitude_bound->c, 16);
    EXPECT_EQ(e.magnitude_bound->u, magnitude_unit_roundoff(dtype(), k));
    EXPECT_EQ(e.magnitude_bound->magnitude, kGemmMagnitude);
    EXPECT_GE(e.max_bound_fraction, 0);
    EXPECT_LT(e.max_bound_fraction, 0.5) << "K " << k;
  }
}

// (b) The planted faults fail at every K.
TEST_P(MagnitudeBoundByDtype, EveryPlantedFaultFailsAtEveryK) {
  for (int k : {64, 256, 1024, 4096, 16384}) {
    SCOPED_TRACE("K " + std::to_string(k));
    const HostGemm& gemm = host_gemm(dtype(), k);
    const std::vector<std::uint16_t> correct = gemm.correct();
    const std::size_t middle = (kRows / 2) * kCols + kCols / 2;

    // One element holding its neighbour's value (an index off by one).
    std::vector<std::uint16_t> shifted = correct;
    shifted[middle] = correct[middle + 1];
    ErrorSummary e = gemm.check(shifted);
    EXPECT_FALSE(passes(e)) << describe(e);
    EXPECT_EQ(e.bad_elements, 1);
    EXPECT_EQ(e.first_bad_index, static_cast<std::int64_t>(middle));

    // One element with its sign flipped.
    std::vector<std::uint16_t> flipped = correct;
    flipped[middle] ^= 0x8000;
    e = gemm.check(flipped);
    EXPECT_FALSE(passes(e)) << describe(e);
    EXPECT_EQ(e.bad_elements, 1);

    // One 16x16 tile (rows 8..23, columns 16..31) that dropped the middle 64-wide K-block.
    const int dropped = (k / kBlockK / 2) * kBlockK;
    const std::vector<std::uint16_t> tile_fault = gemm.output([&](int i, int j) {
      const bool in_tile = i >= 8 && i < 24 && j >= 16 && j < 32;
      if (!in_tile) return gemm.fp32_sum(i, j, 0, k);
      return gemm.fp32_sum(i, j, 0, dropped) + gemm.fp32_sum(i, j, dropped + kBlockK, k);
    });
    e = gemm.check(tile_fault);
    EXPECT_FALSE(passes(e)) << describe(e);
    EXPECT_GT(e.bad_elements, 0);
    std::printf("  %s K %5d: a tile that dropped a K-block has %3lld of its 256 elements bad\n",
                dtype().c_str(), k, static_cast<long long>(e.bad_elements));

    // A NaN (poison left unwritten).
    std::vector<std::uint16_t> nan = correct;
    nan[kCols - 1] = 0xFFFF;
    e = gemm.check(nan);
    EXPECT_FALSE(passes(e)) << describe(e);
    EXPECT_EQ(e.non_finite, 1);

    // A write past the end: the guard behind the output damaged, everything else right.
    e = gemm.check(correct);
    ASSERT_TRUE(passes(e)) << describe(e);
    e.guard_damage = "wrote past the end of C: guard after C damaged at byte 0";
    EXPECT_FALSE(passes(e));
  }
}

// How often a one-element fault goes unseen: a sign flip is missed only for an element within
// the bound of zero, a neighbour's value only where it is that close to the right one. Both are
// caught for nearly every element at every K (the term is a few percent of the output's RMS).
TEST_P(MagnitudeBoundByDtype, OneElementFaultsAreCaughtAlmostEverywhere) {
  for (int k : {64, 1024, 16384}) {
    const HostGemm& gemm = host_gemm(dtype(), k);
    std::size_t flips = 0, neighbours = 0, elements = gemm.reference.size() - 1;
    for (std::size_t i = 0; i < elements; ++i) {
      const float right = round_to(gemm.reference[i], dtype());
      flips += gemm.catches(i, -right);
      neighbours += gemm.catches(i, round_to(gemm.reference[i + 1], dtype()));
    }
    const double flip_rate = double(flips) / elements;
    const double neighbour_rate = double(neighbours) / elements;
    std::printf("  %s K %5d: caught %.1f%% of sign flips, %.1f%% of neighbour's values\n",
                dtype().c_str(), k, 100 * flip_rate, 100 * neighbour_rate);
    EXPECT_GT(flip_rate, 0.95) << "K " << k;
    EXPECT_GT(neighbour_rate, 0.95) << "K " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MagnitudeBoundByDtype, ::testing::Values("bf16", "fp16"),
                         [](const auto& info) { return info.param; });

TEST(MagnitudeBound, DescribeNamesTheTermAndTheFirstBadElementsBound) {
  const HostGemm& gemm = host_gemm("bf16", 16384);
  // The sign of the largest element flipped.
  std::size_t largest = 0;
  for (std::size_t i = 0; i < gemm.reference.size(); ++i)
    if (std::abs(gemm.reference[i]) > std::abs(gemm.reference[largest])) largest = i;
  std::vector<std::uint16_t> output = gemm.correct();
  output[largest] ^= 0x8000;
  const ErrorSummary e = gemm.check(output);
  ASSERT_FALSE(passes(e));
  const std::string reason = describe(e);
  EXPECT_TRUE(contains(reason,
                       "1 bad element (0 non-finite) outside |out - ref| <= 0.0312 + "
                       "0.00781 * |ref| + 16 * u * m (m = |A|*|B|^T, u = "
                       "2^-8/sqrt(16384) + 2^-24 = 3.06e-05), first at " +
                           std::to_string(largest) + ": got "))
      << reason;
  EXPECT_GT(e.first_bad_magnitude, 3500);  // about K / 4
  EXPECT_NEAR(e.first_bad_allowed,
              0.03125 + 0x1p-7 * std::abs(gemm.reference[largest]) +
                  16 * magnitude_unit_roundoff("bf16", 16384) * gemm.magnitude[largest],
              1e-9);
  EXPECT_TRUE(contains(reason, "(m 4.")) << reason;

  const ErrorSummary good = gemm.check(gemm.correct());
  EXPECT_TRUE(
      contains(describe(good), "every element within 0.0312 + 0.00781 * |ref| + 16 * u * m"))
      << describe(good);
  EXPECT_TRUE(contains(describe(good), "of the bound at most)")) << describe(good);
}

TEST(MagnitudeBound, ATermNeedsAMagnitudeAndANonFiniteMagnitudeFails) {
  const std::vector<float> reference{1.0f, 2.0f};
  const std::vector<std::uint16_t> output{bits_of(1.0f, "bf16"), bits_of(2.0f, "bf16")};
  const auto bytes = std::as_bytes(std::span(output));
  EXPECT_THROW(compare_with_reference(bytes, "bf16", reference, gemm_tolerance("bf16")),
               std::invalid_argument);
  const std::vector<float> too_short{1.0f};
  EXPECT_THROW(compare_with_reference(bytes, "bf16", reference, gemm_tolerance("bf16"),
                                      ReferenceMagnitude{too_short, 4, "m"}),
               std::invalid_argument);
  // Without a term the magnitude is not read (and no bound is recorded).
  const ErrorSummary plain =
      compare_with_reference(bytes, "bf16", reference, Tolerance{0.03125, 0x1p-7, 0x1p-7},
                             ReferenceMagnitude{too_short, 4, "m"});
  EXPECT_TRUE(passes(plain)) << describe(plain);
  EXPECT_FALSE(plain.magnitude_bound.has_value());
  // A broken magnitude must not let anything through.
  const std::vector<float> broken{4.0f, std::nanf("")};
  const ErrorSummary e = compare_with_reference(bytes, "bf16", reference, gemm_tolerance("bf16"),
                                                ReferenceMagnitude{broken, 4, "m"});
  EXPECT_FALSE(passes(e)) << describe(e);
  EXPECT_EQ(e.non_finite, 1);
  EXPECT_EQ(e.first_bad_index, 1);
}

}  // namespace
}  // namespace kt
