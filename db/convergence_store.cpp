#include "db/convergence_store.hpp"

#include <algorithm>

#include <SQLiteCpp/SQLiteCpp.h>

#include "db/rows.hpp"
#include "db/store.hpp"

namespace kt {
namespace db {

void append_convergence(SQLite::Database& db, std::int64_t job_id, std::int64_t variant_id,
                        double median_us) {
  SQLite::Statement seen(db, "SELECT 1 FROM job_convergence WHERE job_id = ? AND variant_id = ?");
  seen.bind(1, job_id);
  seen.bind(2, variant_id);
  if (seen.executeStep()) return;
  SQLite::Statement last(db,
                         "SELECT measured, best_us FROM job_convergence WHERE job_id = ?"
                         " ORDER BY measured DESC LIMIT 1");
  last.bind(1, job_id);
  std::int64_t measured = 0;
  double best = median_us;
  if (last.executeStep()) {
    measured = last.getColumn(0).getInt64();
    best = std::min(best, last.getColumn(1).getDouble());
  }
  SQLite::Statement insert(db,
                           "INSERT INTO job_convergence (job_id, measured, variant_id, median_us,"
                           " best_us) VALUES (?, ?, ?, ?, ?)");
  insert.bind(1, job_id);
  insert.bind(2, measured + 1);
  insert.bind(3, variant_id);
  insert.bind(4, median_us);
  insert.bind(5, best);
  insert.exec();
}

}  // namespace db

std::vector<ConvergencePoint> Store::convergence(std::int64_t job_id) {
  const auto reader = readers_->acquire();
  return db::with_context("convergence of job " + std::to_string(job_id), [&] {
    SQLite::Statement query(*reader,
                            "SELECT measured, variant_id, median_us, best_us FROM job_convergence"
                            " WHERE job_id = ? ORDER BY measured");
    query.bind(1, job_id);
    std::vector<ConvergencePoint> points;
    while (query.executeStep())
      points.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getInt64(),
                        query.getColumn(2).getDouble(), query.getColumn(3).getDouble()});
    return points;
  });
}

}  // namespace kt
