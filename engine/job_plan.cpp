#include "engine/job_plan.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "tuner/pinned_configs.hpp"
#include "tuner/search/searcher.hpp"
#include "tuner/variant_space.hpp"

namespace kt {

namespace {

// A pinned job plans only its configs. They were checked when the job was submitted; one that no
// longer fits (the manifest changed before a resume) is recorded as pruned with the reason.
std::vector<VariantPlan> plan_pinned(const Family& family, const JobRecord& job,
                                     const DeviceLimits& limits) {
  std::vector<VariantPlan> plans;
  for (const PinnedConfig& pinned : pinned_configs_from_text(job.pinned_configs_json)) {
    const auto tmpl =
        std::find_if(family.templates.begin(), family.templates.end(),
                     [&](const TemplateSpec& t) { return t.name == pinned.template_name; });
    if (tmpl == family.templates.end())
      continue;  // a template gone from the family: nothing to plan
    VariantPlan plan;
    plan.tmpl = &*tmpl;
    plan.config = pinned.config;
    plan.pruned_by = why_not_in_space(*tmpl, pinned.config, job.shape, job.dtype, limits);
    // plan_job prefixes the reason itself.
    const std::string prefix = "constraint failed: ";
    if (plan.pruned_by && plan.pruned_by->rfind(prefix, 0) == 0)
      plan.pruned_by = plan.pruned_by->substr(prefix.size());
    plans.push_back(std::move(plan));
  }
  return plans;
}

// A survivor kept for the plan by its index in its template's enumeration (16 bytes, decoded when
// it becomes a row): an unsampled survivor of a large space costs no more.
struct Kept {
  const TemplateSpec* tmpl = nullptr;
  std::uint64_t index = 0;
};

// The budget is shared out round-robin over the templates, each visiting its own survivors in a
// seeded order: a template with a large space (mma.sync at 4096^3) must not crowd a small one
// (the Hopper wgmma template) out of a short sample.
std::vector<std::size_t> budget_sample(const std::vector<Kept>& kept,
                                       const std::vector<std::size_t>& survivors,
                                       std::int64_t budget, std::int64_t job_id) {
  std::vector<const TemplateSpec*> templates;
  std::vector<std::vector<std::size_t>> by_template;
  for (std::size_t i : survivors) {
    auto found = std::find(templates.begin(), templates.end(), kept[i].tmpl);
    if (found == templates.end()) {
      templates.push_back(kept[i].tmpl);
      by_template.emplace_back();
      found = templates.end() - 1;
    }
    by_template[static_cast<std::size_t>(found - templates.begin())].push_back(i);
  }
  std::vector<std::vector<std::size_t>> orders;
  for (std::size_t t = 0; t < by_template.size(); ++t)
    orders.push_back(
        seeded_order(by_template[t].size(), static_cast<std::uint64_t>(job_id) * 31 + t));
  std::vector<std::size_t> picked;
  for (std::size_t round = 0; static_cast<std::int64_t>(picked.size()) < budget; ++round)
    for (std::size_t t = 0; t < by_template.size(); ++t)
      if (round < by_template[t].size() && static_cast<std::int64_t>(picked.size()) < budget)
        picked.push_back(by_template[t][orders[t][round]]);
  return picked;
}

// Counts one pruned config into its (template, reason) group, keeping the first few as examples.
// Nearly every config of a large space lands in the group of the one before, looked at first,
// and is compared without building its reason text.
void add_pruned(std::vector<PrunedGroup>& groups, const std::string& template_name,
                const std::string& constraint, const Config& config) {
  static const std::string prefix = "constraint failed: ";
  const auto matches = [&](const PrunedGroup& g) {
    return g.template_name == template_name &&
           g.reason.size() == prefix.size() + constraint.size() &&
           g.reason.compare(prefix.size(), std::string::npos, constraint) == 0;
  };
  auto group = !groups.empty() && matches(groups.back())
                   ? groups.end() - 1
                   : std::find_if(groups.begin(), groups.end(), matches);
  if (group == groups.end()) {
    groups.push_back({template_name, prefix + constraint, 0, {}});
    group = groups.end() - 1;
  }
  ++group->count;
  if (group->examples.size() < kPrunedExamples) group->examples.push_back(config);
}

}  // namespace

JobPlan plan_job(const Family& family, const JobRecord& job, const DeviceLimits& limits,
                 bool whole_space, const StopCheck& stop) {
  JobPlan out;
  // Configs a constraint prunes are counted as they are enumerated and not kept; the rest (the
  // survivors and the templates not written for the arch), in enumeration order.
  std::vector<Kept> kept;
  // The few kept as they are, by their place in `kept`: pinned configs and unsupported templates.
  std::unordered_map<std::size_t, VariantPlan> as_is;
  auto count_or_keep = [&](const VariantPlan& plan, bool pinned) {
    if (plan.pruned_by && !plan.unsupported_arch) {
      add_pruned(out.pruned, plan.tmpl->name, *plan.pruned_by, plan.config);
      return;
    }
    if (pinned || plan.unsupported_arch) as_is.emplace(kept.size(), plan);
    kept.push_back({plan.tmpl, plan.index});
  };
  if (job.pinned_configs_json.empty()) {
    if (!for_each_variant(
            family, job.shape, job.dtype, limits,
            [&](const VariantPlan& plan) { count_or_keep(plan, /*pinned=*/false); }, stop)) {
      JobPlan stopped;
      stopped.stopped = true;
      return stopped;
    }
  } else {
    for (const VariantPlan& plan : plan_pinned(family, job, limits))
      count_or_keep(plan, /*pinned=*/true);
  }
  const auto unsupported = [&](std::size_t i) {
    const auto found = as_is.find(i);
    return found != as_is.end() && found->second.unsupported_arch;
  };

  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (!unsupported(i)) survivors.push_back(i);

  std::vector<bool> selected(kept.size(), true);
  if (!whole_space && job.budget > 0 && static_cast<std::int64_t>(survivors.size()) > job.budget) {
    for (std::size_t i : survivors) selected[i] = false;
    for (std::size_t i : budget_sample(kept, survivors, job.budget, job.id)) selected[i] = true;
  }

  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (!selected[i]) continue;
    const TemplateSpec& tmpl = *kept[i].tmpl;
    const auto whole = as_is.find(i);
    VariantRecord row;
    row.job_id = job.id;
    row.template_name = tmpl.name;
    row.config = whole != as_is.end() ? whole->second.config
                                      : variant_config(tmpl, limits.arch, kept[i].index);
    row.config_key = canonical_key(row.config);
    if (unsupported(i)) {
      row.status = VariantStatus::unsupported_arch;
      row.failed_gate = "arch";
      row.reason = whole->second.pruned_by.value_or("template '" + tmpl.name +
                                                    "' is not written for " + limits.arch);
    } else {
      row.status = VariantStatus::pending;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace kt
