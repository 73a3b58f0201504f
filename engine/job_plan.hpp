// Turns a job into the rows of its variant table: every variant of the family's space for the
// job's arch that can reach the compiler, unsupported templates recorded as such, pruned
// configurations counted per (template, constraint), and — under a budget — a
// deterministic sample of the survivors, shared equally among the templates (the same job id
// always picks the same sample, so a resumed job plans exactly what it planned before).
#pragma once

#include <cstdint>
#include <vector>

#include "db/model.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt {

struct JobPlan {
  std::vector<VariantRecord> rows;  // status pending, or unsupported_arch (one per template)
  std::vector<PrunedGroup> pruned;  // per (template, failed constraint), in plan order
  bool stopped = false;             // `stop` said so: the plan is incomplete, store none of it
};

// What Store::plan_variants stores. With budget > 0 at most `budget` rows are pending; survivors
// beyond the budget are left out of the plan entirely. A job with pinned configs plans only
// those (a pinned config that no longer fits is counted as pruned). whole_space: every survivor,
// whatever the budget (a searched job's candidates: its searcher applies the budget).
// `stop` is asked while the space is enumerated (StopCheck). Survivors are kept as their index
// in the enumeration until the budget's sample is drawn, so an unsampled survivor costs 16 bytes.
JobPlan plan_job(const Family& family, const JobRecord& job, const DeviceLimits& limits,
                 bool whole_space = false, const StopCheck& stop = {});

}  // namespace kt
