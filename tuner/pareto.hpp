// Pareto front over (median time, max error, resource footprint), all three minimised.
#pragma once

#include <cstdint>
#include <vector>

namespace kt {

struct ParetoPoint {
  std::int64_t variant_id = 0;
  double median_us = 0;
  double max_error = 0;  // max |out-ref| / max |ref|
  double footprint = 0;  // bytes of on-chip state per block: smem + 4 * regs * threads
};

// True if a is no worse than b in every objective and better in at least one.
bool dominates(const ParetoPoint& a, const ParetoPoint& b);

// The non-dominated subset of points, sorted by median_us ascending (ties: lower id first).
// Exact duplicates in all three objectives are all kept.
std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points);

}  // namespace kt
