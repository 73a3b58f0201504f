// kt::Store: the job's winner as the interleaved re-measure of its top candidates decided it.
#include <stdexcept>

#include <SQLiteCpp/SQLiteCpp.h>

#include "db/rows.hpp"
#include "db/store.hpp"

namespace kt {
namespace {

// The variant must belong to the job: a comparison naming another job's variant is a bug.
void require_variant_of_job(SQLite::Database& db, std::int64_t job_id, std::int64_t variant_id,
                            const char* role) {
  SQLite::Statement query(db, "SELECT 1 FROM variants WHERE id = ? AND job_id = ?");
  query.bind(1, variant_id);
  query.bind(2, job_id);
  if (!query.executeStep())
    throw std::invalid_argument(std::string(role) + " " + std::to_string(variant_id) +
                                " is not a variant of job " + std::to_string(job_id));
}

}  // namespace

void Store::record_winner_comparison(std::int64_t job_id, const InterleavedResult& comparison) {
  std::lock_guard lock(mutex_);
  db::with_context("record_winner_comparison for job " + std::to_string(job_id), [&] {
    SQLite::Transaction transaction(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    if (!db::load_job(*db_, job_id))
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
    require_variant_of_job(*db_, job_id, comparison.winner_variant_id, "winner");
    const bool has_runner_up = comparison.runner_up_variant_id != 0;
    if (has_runner_up)
      require_variant_of_job(*db_, job_id, comparison.runner_up_variant_id, "runner-up");
    SQLite::Statement update(*db_,
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
    transaction.commit();
  });
}

}  // namespace kt
