// What GET /v1/families says of a family beyond its manifest, by the tuner's rules: what its
// speedups are measured against and how many configurations each template spans. The server
// renders it with the manifest's own fields.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/baseline_summary.hpp"
#include "tuner/family.hpp"

namespace kt {

struct FamilySummary {
  BaselineSummary baseline;
  // Per template, in the family's order: the product of its axes, saturated at INT64_MAX so that
  // it never wraps.
  std::vector<std::int64_t> space_sizes;
};

FamilySummary family_summary_of(const Family& family);

}  // namespace kt
