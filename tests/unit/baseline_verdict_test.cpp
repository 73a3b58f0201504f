// The rule that picks /v1/best's answer (issue 14): ours only when the final comparison shows it
// faster; the baseline on a lower median, on a tie within the noise, and when nothing was measured.
#include <gtest/gtest.h>

#include <cmath>

#include "tuner/baseline_verdict.hpp"

namespace kt {
namespace {

VerdictInputs final_inputs(double ours_us, double baseline_us, Speedup speedup) {
  VerdictInputs inputs;
  inputs.ours_us = ours_us;
  inputs.baseline_us = baseline_us;
  inputs.final_speedup = speedup;
  inputs.baseline_name = "cublaslt_gemm";
  return inputs;
}

TEST(BaselineVerdict, OursOnlyWhenTheIntervalClearsOne) {
  const BaselineVerdict ours = decide_baseline_verdict(final_inputs(97, 100, {1.03, 1.01, 1.05}));
  EXPECT_FALSE(ours.baseline_wins);
  EXPECT_EQ(ours.basis, "final_comparison");
  EXPECT_NE(ours.reason.find("ours is faster"), std::string::npos) << ours.reason;
  EXPECT_NE(ours.reason.find("cublaslt_gemm 100.00 us"), std::string::npos) << ours.reason;

  // The baseline's median is lower: the whole interval below 1.
  const BaselineVerdict slower =
      decide_baseline_verdict(final_inputs(115, 100, {0.87, 0.86, 0.88}));
  EXPECT_TRUE(slower.baseline_wins);
  EXPECT_NE(slower.reason.find("the baseline is faster"), std::string::npos) << slower.reason;

  // Ours has the lower median, but the interval reaches 1: a tie, and the library is the answer.
  const BaselineVerdict tie = decide_baseline_verdict(final_inputs(99, 100, {1.01, 0.995, 1.02}));
  EXPECT_TRUE(tie.baseline_wins);
  EXPECT_NE(tie.reason.find("tie within the noise"), std::string::npos) << tie.reason;

  // Exactly 1 at the low end is not "above".
  EXPECT_TRUE(decide_baseline_verdict(final_inputs(99, 100, {1.01, 1.0, 1.02})).baseline_wins);
  EXPECT_FALSE(shown_faster_than_baseline({1.01, 1.0, 1.02}));
  EXPECT_TRUE(shown_faster_than_baseline({1.01, 1.0001, 1.02}));
}

TEST(BaselineVerdict, FirstPassMediansDecideWithoutAFinalComparison) {
  VerdictInputs inputs;
  inputs.ours_us = 90;
  inputs.baseline_us = 100;
  const BaselineVerdict ours = decide_baseline_verdict(inputs);
  EXPECT_FALSE(ours.baseline_wins);
  EXPECT_EQ(ours.basis, "first_pass");
  EXPECT_NE(ours.reason.find("no interval"), std::string::npos) << ours.reason;

  inputs.ours_us = 100;  // equal medians: the baseline is not slower
  EXPECT_TRUE(decide_baseline_verdict(inputs).baseline_wins);
  inputs.ours_us = 120;
  EXPECT_TRUE(decide_baseline_verdict(inputs).baseline_wins);
}

TEST(BaselineVerdict, NoVariantMeansTheBaselineNoBaselineMeansOurs) {
  VerdictInputs nothing_measured;
  nothing_measured.baseline_us = 26.5;
  const BaselineVerdict none = decide_baseline_verdict(nothing_measured);
  EXPECT_TRUE(none.baseline_wins);
  EXPECT_EQ(none.basis, "no_variant");
  EXPECT_NE(none.reason.find("26.50 us"), std::string::npos) << none.reason;

  nothing_measured.ours_us = 0;  // a zero or non-finite time counts as missing
  EXPECT_EQ(decide_baseline_verdict(nothing_measured).basis, "no_variant");
  nothing_measured.ours_us = std::nan("");
  EXPECT_EQ(decide_baseline_verdict(nothing_measured).basis, "no_variant");

  VerdictInputs no_baseline;
  no_baseline.ours_us = 40;
  const BaselineVerdict ours = decide_baseline_verdict(no_baseline);
  EXPECT_FALSE(ours.baseline_wins);
  EXPECT_EQ(ours.basis, "no_baseline");
  // A final speedup without a baseline time cannot be checked against anything: still ours.
  no_baseline.final_speedup = Speedup{0.5, 0.4, 0.6};
  EXPECT_EQ(decide_baseline_verdict(no_baseline).basis, "no_baseline");
}

}  // namespace
}  // namespace kt
