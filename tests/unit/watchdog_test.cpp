#include "engine/watchdog.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace kt {
namespace {

using namespace std::chrono_literals;

// Default timing: 3 warm-ups, at most 500 trials, 2 s of trials.
MeasureRequest request_with_reference(double reference_us) {
  MeasureRequest r;
  r.reference_us = reference_us;
  return r;
}

void expect_ms(std::chrono::milliseconds actual, double expected_ms) {
  EXPECT_NEAR(static_cast<double>(actual.count()), expected_ms, 1.0);
}

TEST(Watchdog, UnknownReferenceFallsBackToTheCallersBound) {
  EXPECT_EQ(measure_watchdog(request_with_reference(0), 26s), 26s);
  EXPECT_EQ(measure_watchdog(request_with_reference(-5), 3s), 3s);
}

TEST(Watchdog, FiftyTimesTheReferencePerLaunch) {
  // 100 us reference: 5 ms per launch, 6 ms per trial; 10 untimed launches (3 warm-up, 3
  // estimate, 1 graph warm-up, 3 checks) = 50 ms; trials min(2 s + 6 ms, 1000 x 6 ms) = 2.006 s;
  // plus the 10 s allowance.
  expect_ms(measure_watchdog(request_with_reference(100), 26s), 12056);
}

TEST(Watchdog, AtLeastOneMillisecondPerLaunch) {
  // 1 us reference: 1 ms per launch (not 50 us), 2 ms per trial; the trial count caps the timed
  // part at 2 x 500 x 2 ms = 2 s.
  expect_ms(measure_watchdog(request_with_reference(1), 26s), 10000 + 10 + 2000);
}

TEST(Watchdog, SlowReferencesGetLongerButBoundedWaits) {
  // 100 ms reference: 5 s per launch -> 50 s untimed, 2 s + 5.001 s timed.
  expect_ms(measure_watchdog(request_with_reference(100000), 26s), 10000 + 50000 + 7001);
  EXPECT_EQ(measure_watchdog(request_with_reference(10e6), 26s), 600s);  // the ceiling
}

TEST(Watchdog, CorrectnessOnlyRequestsHaveNoTimedPart) {
  MeasureRequest r = request_with_reference(100);
  r.time = false;
  expect_ms(measure_watchdog(r, 26s), 10050);
}

TEST(Watchdog, RuleBoundsApply) {
  WatchdogRule rule;
  rule.allowance = 0ms;
  rule.floor = 4s;
  rule.ceiling = 5s;
  EXPECT_EQ(measure_watchdog(request_with_reference(1), 26s, rule), 4s);
  EXPECT_EQ(measure_watchdog(request_with_reference(10000), 26s, rule), 5s);
}

TEST(Watchdog, InterleavedCoversEveryCandidate) {
  InterleavedRequest r;
  for (int i = 0; i < 3; ++i) r.candidates.push_back(request_with_reference(100));
  // The allowance once; per candidate 50 ms untimed and 2.006 s of trials.
  expect_ms(interleaved_watchdog(r, 26s), 10000 + 3 * 50 + 3 * 2006);
  r.candidates[1].reference_us = 0;  // one unknown: the caller's bound per candidate
  EXPECT_EQ(interleaved_watchdog(r, 26s), 78s);
  EXPECT_EQ(interleaved_watchdog(InterleavedRequest{}, 26s), 26s);
}

}  // namespace
}  // namespace kt
