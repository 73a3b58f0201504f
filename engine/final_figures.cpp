#include "engine/final_figures.hpp"

#include "tuner/baseline_verdict.hpp"

namespace kt {

std::optional<FinalFigures> final_figures(const JobRecord& job, std::int64_t variant_id) {
  if (!job.final_comparison) return std::nullopt;
  const InterleavedResult& final = *job.final_comparison;
  const TimingSummary* timing = final_timing_of(final, variant_id);
  if (timing == nullptr) return std::nullopt;
  FinalFigures figures;
  figures.timing = *timing;
  figures.winner = final.winner_variant_id == variant_id;
  figures.baseline = final.baseline;
  if (final.baseline_timing) figures.baseline_median_us = final.baseline_timing->median_us;
  figures.speedup = speedup_of(final, variant_id);
  if (figures.speedup) figures.faster_than_baseline = shown_faster_than_baseline(*figures.speedup);
  return figures;
}

std::optional<bool> final_baseline_wins(const JobRecord& job) {
  if (!job.final_comparison || !job.final_comparison->baseline_timing) return std::nullopt;
  const auto speedup = winner_speedup(*job.final_comparison);
  if (!speedup) return std::nullopt;
  return !shown_faster_than_baseline(*speedup);
}

}  // namespace kt
