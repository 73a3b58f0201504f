#include "tuner/baseline_verdict.hpp"

#include <cmath>

#include <fmt/format.h>

namespace kt {
namespace {

std::optional<double> usable(const std::optional<double>& us) {
  if (us && std::isfinite(*us) && *us > 0) return us;
  return std::nullopt;
}

}  // namespace

BaselineVerdict decide_baseline_verdict(const VerdictInputs& inputs) {
  const auto ours = usable(inputs.ours_us);
  const auto baseline = usable(inputs.baseline_us);
  const std::string& name = inputs.baseline_name;
  BaselineVerdict verdict;
  if (!ours) {
    verdict.baseline_wins = true;
    verdict.basis = "no_variant";
    verdict.reason =
        baseline
            ? fmt::format("no variant of ours was measured; {} takes {:.2f} us", name, *baseline)
            : fmt::format("no variant of ours was measured; {} is the answer", name);
    return verdict;
  }
  if (!baseline) {
    verdict.basis = "no_baseline";
    verdict.reason =
        fmt::format("no time for {}: nothing to compare ours ({:.2f} us) with", name, *ours);
    return verdict;
  }
  if (inputs.final_speedup) {
    const Speedup& s = *inputs.final_speedup;
    verdict.basis = "final_comparison";
    verdict.baseline_wins = !shown_faster_than_baseline(s);
    const char* why = !verdict.baseline_wins ? "ours is faster (interval above 1)"
                      : s.high < 1.0         ? "the baseline is faster (interval below 1)"
                                             : "a tie within the noise (interval spans 1): the "
                                               "library is the answer";
    verdict.reason = fmt::format(
        "final comparison: ours {:.2f} us, {} {:.2f} us, ratio {:.3f}x [{:.3f}, {:.3f}]: {}", *ours,
        name, *baseline, s.value, s.low, s.high, why);
    return verdict;
  }
  verdict.basis = "first_pass";
  verdict.baseline_wins = !(*ours < *baseline);
  verdict.reason = fmt::format(
      "first pass only (no final comparison, no interval): ours {:.2f} us, {} {:.2f} us, ratio "
      "{:.3f}x: {}",
      *ours, name, *baseline, *baseline / *ours,
      verdict.baseline_wins ? "the baseline is not slower" : "ours is faster");
  return verdict;
}

}  // namespace kt
