#include "tuner/job_plan.hpp"

#include <algorithm>
#include <numeric>

#include "tuner/variant_space.hpp"

namespace kt {

std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = n; i > 1; --i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
    const std::size_t j = static_cast<std::size_t>((state >> 33) % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::vector<VariantRecord> plan_job(const Family& family, const JobRecord& job,
                                    const DeviceLimits& limits) {
  const std::vector<VariantPlan> plans = enumerate_variants(family, job.shape, job.dtype, limits);

  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (!plans[i].pruned_by && !plans[i].unsupported_arch) survivors.push_back(i);

  std::vector<bool> selected(plans.size(), true);
  if (job.budget > 0 && static_cast<std::int64_t>(survivors.size()) > job.budget) {
    for (std::size_t i : survivors) selected[i] = false;
    const auto order = seeded_permutation(survivors.size(), static_cast<std::uint64_t>(job.id));
    for (std::int64_t k = 0; k < job.budget; ++k) selected[survivors[order[k]]] = true;
  }

  std::vector<VariantRecord> rows;
  rows.reserve(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!selected[i]) continue;
    const VariantPlan& plan = plans[i];
    VariantRecord row;
    row.job_id = job.id;
    row.template_name = plan.tmpl->name;
    row.config = plan.config;
    row.config_key = canonical_key(plan.config);
    if (plan.unsupported_arch) {
      row.status = VariantStatus::unsupported_arch;
      row.failed_gate = "arch";
      row.reason = plan.pruned_by.value_or("template '" + plan.tmpl->name +
                                           "' is not written for " + limits.arch);
    } else if (plan.pruned_by) {
      row.status = VariantStatus::pruned;
      row.failed_gate = "constraints";
      row.reason = "constraint failed: " + *plan.pruned_by;
    } else {
      row.status = VariantStatus::pending;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kt
