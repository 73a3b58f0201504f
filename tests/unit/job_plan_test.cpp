#include "tuner/job_plan.hpp"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

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

TEST(JobPlan, RecordsPrunedAndUnsupportedVariantsWithReasons) {
  const auto rows = plan_job(tiny_family(), tiny_job(1, 0), *limits_for_arch("sm_90a"));
  EXPECT_EQ(count(rows, VariantStatus::pending), 14u);
  EXPECT_EQ(count(rows, VariantStatus::pruned), 2u);
  EXPECT_EQ(count(rows, VariantStatus::unsupported_arch), 1u);
  for (const auto& row : rows) {
    if (row.status == VariantStatus::pruned) {
      EXPECT_NE(row.reason.find("A*B <= 16"), std::string::npos);
    }
    if (row.status == VariantStatus::unsupported_arch) {
      EXPECT_EQ(row.template_name, "bw");
    }
  }
}

TEST(JobPlan, BudgetKeepsADeterministicSpreadOfSurvivors) {
  const auto limits = *limits_for_arch("sm_100a");
  const auto first = plan_job(tiny_family(), tiny_job(7, 5), limits);
  const auto again = plan_job(tiny_family(), tiny_job(7, 5), limits);
  EXPECT_EQ(count(first, VariantStatus::pending), 5u);
  ASSERT_EQ(first.size(), again.size());
  for (std::size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(first[i].config_key, again[i].config_key);
  // Pruned rows stay in the plan whatever the budget.
  EXPECT_EQ(count(first, VariantStatus::pruned), 4u);
  // Another job samples another subset (with 28 survivors, 5 of them, collisions are unlikely).
  const auto other = plan_job(tiny_family(), tiny_job(8, 5), limits);
  std::set<std::string> a, b;
  for (auto& r : first)
    if (r.status == VariantStatus::pending) a.insert(r.template_name + r.config_key);
  for (auto& r : other)
    if (r.status == VariantStatus::pending) b.insert(r.template_name + r.config_key);
  EXPECT_NE(a, b);
}

TEST(SeededPermutation, IsAPermutationAndDependsOnTheSeed) {
  const auto p = seeded_permutation(100, 42);
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(p, seeded_permutation(100, 42));
  EXPECT_NE(p, seeded_permutation(100, 43));
  EXPECT_TRUE(seeded_permutation(0, 1).empty());
}

}  // namespace
}  // namespace kt
