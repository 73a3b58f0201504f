// Which answer a tuned problem gets: our best variant, or the family's baseline (the library call
// a user makes without kerntune, e.g. cublasLt). One rule for the daemon (/v1/best, the job view)
// and the benchmark (issue 14), so "never worse than the baseline" means the same everywhere:
//
//  1. Final comparison (our best and the baseline re-measured interleaved; ratio = baseline
//     median / ours with its bootstrap 95% interval): ours only when it is shown faster, the
//     interval's low end above 1. A baseline median below ours, or an interval that reaches 1
//     (a tie within the noise), answers with the baseline: the user already has it, with nothing
//     to compile, ship or trust, and a tie does not pay for that.
//  2. No final comparison for our best (it failed, was cut short, or our best was not in it):
//     the first-pass medians decide, without an interval: ours only when its median is below
//     the baseline's.
//  3. No measured variant (nothing survived the constraints, every variant failed): the baseline.
//  4. No baseline figure at all: ours, since there is nothing to compare with.
#pragma once

#include <optional>
#include <string>

#include "tuner/interleaved_protocol.hpp"

namespace kt {

struct VerdictInputs {
  std::optional<double> ours_us;         // our best's median (interleaved when it was compared)
  std::optional<Speedup> final_speedup;  // baseline / ours from the final comparison, if compared
  std::optional<double> baseline_us;     // the baseline's median from the same source
  std::string baseline_name = "the baseline";  // for the reason, e.g. "cublaslt_gemm"
};

struct BaselineVerdict {
  bool baseline_wins = false;
  // "final_comparison", "first_pass", "no_variant" or "no_baseline": which case of the rule.
  std::string basis;
  std::string reason;  // the decision in words, with the numbers
};

// The rule above. Non-positive or non-finite times count as missing.
BaselineVerdict decide_baseline_verdict(const VerdictInputs& inputs);

// Rule 1 alone: the interval's low end is above 1.
inline bool shown_faster_than_baseline(const Speedup& s) {
  return s.low > 1.0;
}

}  // namespace kt
