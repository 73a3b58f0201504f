// Searched jobs: the searcher (engine/job_search.hpp) hands out batches of the space while the
// pipelined pipeline runs them; each pick is claimed before it runs.
#include "engine/job_execution.hpp"

#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/job_plan.hpp"
#include "engine/job_search.hpp"

namespace kt {

void JobExecution::run_searched() {
  JobPlan plan =
      plan_job(family_, job_, limits_, /*whole_space=*/true, [this] { return interrupted(); });
  if (plan.stopped) return finish_interrupted();
  std::vector<VariantRecord> candidates, fixed;
  for (VariantRecord& row : plan.rows)
    (row.status == VariantStatus::pending ? candidates : fixed).push_back(std::move(row));
  ctx_.store.plan_variants(job_.id, fixed, plan.pruned);
  const std::size_t batch = search_batch_size(ctx_.ordinals.size());
  spdlog::info("job {}: {} {} {} on {}: {} search over {} candidates (budget {}, batch {})",
               job_.id, family_.name, job_.shape_key, job_.dtype, limits_.arch, job_.search,
               candidates.size(), job_.budget, batch);
  if (!take_place()) return;
  SearchFeed feed(ctx_.store, job_, std::move(candidates), batch, &family_, limits_,
                  ctx_.options.predictors);
  // Each pick is claimed before it runs: one another daemon holds (or finished) is skipped.
  const bool finished = run_pipelined(
      [&]() -> std::optional<VariantRecord> {
        while (auto pick = feed.next(base_wall_seconds_ + timeline_.wall_seconds()))
          if (ctx_.store.claim_variant(pick->id)) return pick;
        return std::nullopt;
      },
      batch);
  if (!finished) return;
  spdlog::info("job {}: {} search stopped: {}", job_.id, job_.search, to_string(feed.stopped()));
  publish_timing();
  if (interrupted()) return finish_interrupted();
  final_comparison();
  ctx_.store.set_job_status(job_.id, JobStatus::done);
}

}  // namespace kt
