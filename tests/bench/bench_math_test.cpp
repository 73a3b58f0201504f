#include "bench/bench_math.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

TEST(BenchMath, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_THROW(median(std::vector<double>{}), std::invalid_argument);
}

TEST(BenchMath, RunToRunSpreadIsRangeOverMedian) {
  const Spread s = run_to_run_spread({100, 101, 99, 100.5, 100});
  EXPECT_EQ(s.runs, 5);
  EXPECT_DOUBLE_EQ(s.median_us, 100);
  EXPECT_DOUBLE_EQ(s.min_us, 99);
  EXPECT_DOUBLE_EQ(s.max_us, 101);
  EXPECT_DOUBLE_EQ(s.spread, 0.02);
  EXPECT_DOUBLE_EQ(run_to_run_spread({42}).spread, 0);
  EXPECT_THROW(run_to_run_spread({}), std::invalid_argument);
  EXPECT_THROW(run_to_run_spread({10, 0}), std::invalid_argument);
}

TEST(BenchMath, RatioTflopsAndBandwidth) {
  EXPECT_DOUBLE_EQ(speed_ratio(176.7, 158.0), 176.7 / 158.0);
  EXPECT_THROW(speed_ratio(1, 0), std::invalid_argument);
  // 2 * 4096^3 flop in 137.4 us ~ 1000 TFLOP/s
  EXPECT_NEAR(gemm_tflops(4096, 4096, 4096, 137.438953472), 1000.0, 1e-6);
  // 64x4096x7168 bf16: (64*7168 + 4096*7168 + 64*4096) * 2 bytes
  EXPECT_DOUBLE_EQ(gemm_min_bytes(64, 4096, 7168, 2),
                   (64.0 * 7168 + 4096.0 * 7168 + 64.0 * 4096) * 2);
  // 3e6 bytes in 1 us = 3000 GB/s; against a 3000 GB/s copy that is all of it
  EXPECT_DOUBLE_EQ(bandwidth_fraction(3e6, 1, 3000), 1.0);
  EXPECT_DOUBLE_EQ(bandwidth_fraction(3e6, 2, 3000), 0.5);
  EXPECT_THROW(bandwidth_fraction(3e6, 2, 0), std::invalid_argument);
  // 1 GiB copied in 1 ms: read and written, 2 * 1.073741824 GB / 1 ms
  EXPECT_DOUBLE_EQ(copy_gbps(1073741824.0, 1.0), 2147.483648);
}

TEST(BenchMath, SameWinnerAgrees) {
  const RunWinner a{"t|BM=128", 100, {{"t|BM=128", 100}, {"t|BM=64", 110}}};
  const RunWinner b{"t|BM=128", 101, {{"t|BM=128", 101}, {"t|BM=64", 111}}};
  const WinnerAgreement w = compare_winners(a, b);
  EXPECT_TRUE(w.same_winner);
  EXPECT_TRUE(w.within_tolerance);
  EXPECT_NEAR(w.winner_gap, 0.01, 1e-12);
}

TEST(BenchMath, DifferentWinnerJudgedInsideEachRun) {
  // B picked BM=64; in run A it was 1.5% slower than A's winner, in run B A's winner was 1%
  // slower: within 2%.
  const RunWinner a{"t|BM=128", 100, {{"t|BM=128", 100}, {"t|BM=64", 101.5}}};
  const RunWinner b{"t|BM=64", 99, {{"t|BM=128", 99.99}, {"t|BM=64", 99}}};
  const WinnerAgreement w = compare_winners(a, b);
  EXPECT_FALSE(w.same_winner);
  ASSERT_TRUE(w.b_winner_in_a);
  EXPECT_NEAR(*w.b_winner_in_a, 0.015, 1e-12);
  ASSERT_TRUE(w.a_winner_in_b);
  EXPECT_NEAR(*w.a_winner_in_b, 0.01, 1e-12);
  EXPECT_NEAR(w.gap, 0.015, 1e-12);
  EXPECT_TRUE(w.within_tolerance);

  // 3% slower inside run A: not within 2%, even though the two winners' own times are close.
  const RunWinner a2{"t|BM=128", 100, {{"t|BM=128", 100}, {"t|BM=64", 103}}};
  const WinnerAgreement w2 = compare_winners(a2, b);
  EXPECT_FALSE(w2.within_tolerance);
  EXPECT_NEAR(w2.gap, 0.03, 1e-12);
}

TEST(BenchMath, DifferentWinnerNeverCrossMeasuredUsesWinnerTimes) {
  const RunWinner a{"x", 100, {{"x", 100}}};
  const RunWinner b{"y", 97, {{"y", 97}}};
  const WinnerAgreement w = compare_winners(a, b);
  EXPECT_FALSE(w.b_winner_in_a);
  EXPECT_FALSE(w.a_winner_in_b);
  EXPECT_NEAR(w.gap, 0.03, 1e-12);
  EXPECT_FALSE(w.within_tolerance);
  EXPECT_THROW(compare_winners(a, RunWinner{}), std::invalid_argument);
}

}  // namespace
}  // namespace kt::bench
