#include "engine/job_plan.hpp"
#include "tuner/search/searcher.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "tuner/pinned_configs.hpp"

namespace kt {
namespace {

Family tiny_family() {
  Family family;
  family.name = "tiny";
  family.dims = {{"N", 1, 1 << 20, ""}};
  family.dtypes = {"bf16"};
  TemplateSpec tmpl;
  tmpl.name = "t";
  tmpl.source = "t.cuh";
  tmpl.kernel = "k";
  tmpl.archs = {"sm_90a", "sm_100a"};
  tmpl.axes = {{"A", {1, 2, 3, 4}, {}, ""}, {"B", {1, 2, 4, 8}, {}, ""}};
  tmpl.constraints = {"A*B <= 16"};  // prunes (3,8), (4,8)
  tmpl.launch.grid = {"cdiv(N,A)", "1", "1"};
  tmpl.launch.block = {"32", "1", "1"};
  family.templates.push_back(tmpl);
  TemplateSpec blackwell = tmpl;
  blackwell.name = "bw";
  blackwell.archs = {"sm_100a"};
  family.templates.push_back(blackwell);
  return family;
}

JobRecord tiny_job(std::int64_t id, std::int64_t budget) {
  JobRecord job;
  job.id = id;
  job.family = "tiny";
  job.shape = {{"N", 1000}};
  job.dtype = "bf16";
  job.budget = budget;
  return job;
}

std::size_t count(const std::vector<VariantRecord>& rows, VariantStatus status) {
  return std::count_if(rows.begin(), rows.end(), [&](auto& r) { return r.status == status; });
}

std::size_t count(const JobPlan& plan, VariantStatus status) {
  return count(plan.rows, status);
}

std::int64_t pruned_total(const JobPlan& plan) {
  std::int64_t total = 0;
  for (const PrunedGroup& group : plan.pruned) total += group.count;
  return total;
}

TEST(JobPlan, CountsPrunedConfigsAndRecordsUnsupportedTemplates) {
  const JobPlan plan = plan_job(tiny_family(), tiny_job(1, 0), *limits_for_arch("sm_90a"));
  EXPECT_EQ(count(plan, VariantStatus::pending), 14u);
  EXPECT_EQ(count(plan, VariantStatus::pruned), 0u) << "pruned configs get no row";
  EXPECT_EQ(count(plan, VariantStatus::unsupported_arch), 1u);
  for (const auto& row : plan.rows)
    if (row.status == VariantStatus::unsupported_arch) EXPECT_EQ(row.template_name, "bw");
  ASSERT_EQ(plan.pruned.size(), 1u);
  EXPECT_EQ(plan.pruned[0].template_name, "t");
  EXPECT_EQ(plan.pruned[0].reason, "constraint failed: A*B <= 16");
  EXPECT_EQ(plan.pruned[0].count, 2);
  ASSERT_EQ(plan.pruned[0].examples.size(), 2u);
  EXPECT_EQ(canonical_key(plan.pruned[0].examples[0]), "A=3,B=8");
}

TEST(JobPlan, KeepsOnlyTheFirstFewExamplesOfALargeGroup) {
  Family family = tiny_family();
  family.templates[0].constraints = {"A*B <= 2"};  // prunes 13 of 16
  const JobPlan plan = plan_job(family, tiny_job(1, 0), *limits_for_arch("sm_90a"));
  ASSERT_EQ(plan.pruned.size(), 1u);
  EXPECT_EQ(plan.pruned[0].count, 13);
  EXPECT_EQ(plan.pruned[0].examples.size(), kPrunedExamples);
}

TEST(JobPlan, BudgetKeepsADeterministicSpreadOfSurvivors) {
  const auto limits = *limits_for_arch("sm_100a");
  const auto first = plan_job(tiny_family(), tiny_job(7, 5), limits);
  const auto again = plan_job(tiny_family(), tiny_job(7, 5), limits);
  EXPECT_EQ(count(first, VariantStatus::pending), 5u);
  ASSERT_EQ(first.rows.size(), again.rows.size());
  for (std::size_t i = 0; i < first.rows.size(); ++i)
    EXPECT_EQ(first.rows[i].config_key, again.rows[i].config_key);
  // Pruned configs are counted whatever the budget.
  EXPECT_EQ(pruned_total(first), 4);
  // Another job samples another subset (with 28 survivors, 5 of them, collisions are unlikely).
  const auto other = plan_job(tiny_family(), tiny_job(8, 5), limits);
  std::set<std::string> a, b;
  for (auto& r : first.rows)
    if (r.status == VariantStatus::pending) a.insert(r.template_name + r.config_key);
  for (auto& r : other.rows)
    if (r.status == VariantStatus::pending) b.insert(r.template_name + r.config_key);
  EXPECT_NE(a, b);
}

TEST(JobPlan, BudgetIsSharedEquallyAmongTemplates) {
  Family family = tiny_family();
  TemplateSpec small = family.templates[0];
  small.name = "small";
  small.axes = {{"A", {1, 2}, {}, ""}, {"B", {1}, {}, ""}};  // 2 survivors against t's 14
  family.templates.push_back(small);
  for (std::int64_t id = 1; id <= 5; ++id) {
    const JobPlan plan = plan_job(family, tiny_job(id, 4), *limits_for_arch("sm_90a"));
    std::map<std::string, int> pending;
    for (const auto& r : plan.rows)
      if (r.status == VariantStatus::pending) ++pending[r.template_name];
    EXPECT_EQ(pending["small"], 2) << "job " << id;
    EXPECT_EQ(pending["t"], 2) << "job " << id;
  }
  // A budget larger than the small template's share goes to the rest.
  EXPECT_EQ(
      count(plan_job(family, tiny_job(9, 10), *limits_for_arch("sm_90a")), VariantStatus::pending),
      10u);
}

TEST(JobPlan, PinnedConfigsPlanOnlyThemselves) {
  JobRecord job = tiny_job(3, 0);
  job.pinned_configs_json = pinned_configs_to_text(
      {{"t", {{"A", 2}, {"B", 4}}}, {"t", {{"A", 1}, {"B", 1}}}, {"t", {{"A", 4}, {"B", 8}}}});
  const JobPlan plan = plan_job(tiny_family(), job, *limits_for_arch("sm_90a"));
  ASSERT_EQ(plan.rows.size(), 2u);
  EXPECT_EQ(plan.rows[0].config_key, "A=2,B=4");
  EXPECT_EQ(plan.rows[0].status, VariantStatus::pending);
  EXPECT_EQ(plan.rows[1].status, VariantStatus::pending);
  // No longer a point of the space (say the manifest changed before a resume): pruned, with why.
  ASSERT_EQ(plan.pruned.size(), 1u);
  EXPECT_EQ(plan.pruned[0].reason, "constraint failed: A*B <= 16");
  EXPECT_EQ(canonical_key(plan.pruned[0].examples.at(0)), "A=4,B=8");
  // A budget samples the pinned configs like any survivors.
  job.budget = 1;
  EXPECT_EQ(count(plan_job(tiny_family(), job, *limits_for_arch("sm_90a")), VariantStatus::pending),
            1u);
}

TEST(JobPlan, AStoppedPlanIsMarkedAndHoldsNothing) {
  Family family = tiny_family();
  for (const char* name : {"C", "D", "E"}) {
    AxisSpec axis{name, {}, {}, ""};
    for (int v = 0; v < 100; ++v) axis.values.push_back(v);
    family.templates[0].axes.push_back(axis);
  }
  int asked = 0;
  const JobPlan plan = plan_job(family, tiny_job(1, 0), *limits_for_arch("sm_90a"), false,
                                [&] { return ++asked == 2; });
  EXPECT_TRUE(plan.stopped);
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(plan.rows.empty());
  EXPECT_TRUE(plan.pruned.empty());
  // Not stopped, a plan is whole: every configuration is a row or counted as pruned.
  Family small = tiny_family();
  small.templates[0].axes.push_back({"C", {0, 1, 2}, {}, ""});
  const JobPlan whole =
      plan_job(small, tiny_job(1, 0), *limits_for_arch("sm_90a"), false, [] { return false; });
  EXPECT_FALSE(whole.stopped);
  EXPECT_EQ(count(whole, VariantStatus::pending) + static_cast<std::size_t>(pruned_total(whole)),
            48u);
}

TEST(SeededPermutation, IsAPermutationAndDependsOnTheSeed) {
  const auto p = seeded_order(100, 42);
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(p, seeded_order(100, 42));
  EXPECT_NE(p, seeded_order(100, 43));
  EXPECT_TRUE(seeded_order(0, 1).empty());
}

}  // namespace
}  // namespace kt
