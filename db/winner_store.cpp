// kt::db::WinnerStore: the job's baselines per GPU, and its final result: the interleaved
// re-measure of its top candidates beside the baseline.
#include "db/winner_store.hpp"

#include <mutex>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/pareto_store.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {
namespace {

// The variant must belong to the job: a comparison naming another job's variant is a bug.
void require_variant_of_job(db::Connection& db, std::int64_t job_id, std::int64_t variant_id,
                            const char* role) {
  db::Statement query(db, "SELECT 1 FROM variants WHERE id = ? AND job_id = ?");
  query.bind(1, variant_id);
  query.bind(2, job_id);
  if (!query.step())
    throw std::invalid_argument(std::string(role) + " " + std::to_string(variant_id) +
                                " is not a variant of job " + std::to_string(job_id));
}

// The compared variants' points, moved to their interleaved medians (a tune job's only).
void update_front_with_final_medians(db::Connection& db, std::int64_t job_id,
                                     const InterleavedResult& comparison) {
  const auto job = db::load_job(db, job_id);
  if (!job || job->mode != JobMode::tune) return;
  for (std::size_t i = 0; i < comparison.variant_ids.size() && i < comparison.timings.size(); ++i) {
    auto variant = db::load_variant(db, comparison.variant_ids[i]);
    if (!variant || variant->job_id != job_id || !variant->timing || !variant->error ||
        !(comparison.timings[i].median_us > 0))
      continue;
    variant->timing->median_us = comparison.timings[i].median_us;
    db::remove_from_front(db, variant->id);
    db::add_to_front(db, *job, *variant);
  }
}

}  // namespace

void WinnerStore::record_job_baseline(std::int64_t id, int gpu_ordinal,
                                      const BaselineTiming& baseline) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_job_baseline for job " + std::to_string(id), [&] {
    writer_.touches_job(id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    auto job = db::load_job(writer_.db(), id);
    if (!job) throw std::invalid_argument("job " + std::to_string(id) + " does not exist");
    job->baselines[std::to_string(gpu_ordinal)] = {{"median_us", baseline.timing.median_us},
                                                   {"timing", to_json(baseline.timing)},
                                                   {"baseline", baseline.baseline}};
    db::Statement update(writer_.db(),
                         "UPDATE jobs SET baselines_json = ?,"
                         " reference_us = COALESCE(reference_us, ?) WHERE id = ?");
    update.bind(1, job->baselines.dump());
    update.bind(2, baseline.timing.median_us);
    update.bind(3, id);
    update.exec();
    transaction.commit();
  });
}

void WinnerStore::record_job_baseline_failure(std::int64_t id, int gpu_ordinal,
                                              const std::string& reason,
                                              const nlohmann::json& baseline) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_job_baseline_failure for job " + std::to_string(id), [&] {
    writer_.touches_job(id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    auto job = db::load_job(writer_.db(), id);
    if (!job) throw std::invalid_argument("job " + std::to_string(id) + " does not exist");
    job->baselines[std::to_string(gpu_ordinal)] = {{"failed", reason}, {"baseline", baseline}};
    db::Statement update(writer_.db(), "UPDATE jobs SET baselines_json = ? WHERE id = ?");
    update.bind(1, job->baselines.dump());
    update.bind(2, id);
    update.exec();
    transaction.commit();
  });
}

void WinnerStore::record_winner_comparison(std::int64_t job_id,
                                           const InterleavedResult& comparison) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_winner_comparison for job " + std::to_string(job_id), [&] {
    writer_.touches_job(job_id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    if (!db::load_job(writer_.db(), job_id))
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
    require_variant_of_job(writer_.db(), job_id, comparison.winner_variant_id, "winner");
    const bool has_runner_up = comparison.runner_up_variant_id != 0;
    if (has_runner_up)
      require_variant_of_job(writer_.db(), job_id, comparison.runner_up_variant_id, "runner-up");
    db::Statement update(writer_.db(),
                         "UPDATE jobs SET winner_variant_id = ?, runner_up_variant_id = ?,"
                         " winner_distinguishable = ?, winner_margin = ? WHERE id = ?");
    update.bind(1, comparison.winner_variant_id);
    if (has_runner_up) {  // a lone candidate has nothing to be told apart from: NULLs
      update.bind(2, comparison.runner_up_variant_id);
      update.bind(3, comparison.distinguishable ? 1 : 0);
      update.bind(4, comparison.margin);
    }
    update.bind(5, job_id);
    update.exec();
    db::Statement final_row(writer_.db(), "UPDATE jobs SET final_comparison_json = ? WHERE id = ?");
    final_row.bind(1, to_json(comparison).dump());
    final_row.bind(2, job_id);
    final_row.exec();
    update_front_with_final_medians(writer_.db(), job_id, comparison);
    transaction.commit();
  });
}

}  // namespace kt::db
