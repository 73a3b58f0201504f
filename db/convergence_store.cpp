#include "db/convergence_store.hpp"

#include <algorithm>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"

namespace kt::db {

void append_convergence(db::Connection& db, std::int64_t job_id, std::int64_t variant_id,
                        double median_us) {
  db::Statement seen(db, "SELECT 1 FROM job_convergence WHERE job_id = ? AND variant_id = ?");
  seen.bind(1, job_id);
  seen.bind(2, variant_id);
  if (seen.step()) return;
  db::Statement last(db,
                     "SELECT measured, best_us FROM job_convergence WHERE job_id = ?"
                     " ORDER BY measured DESC LIMIT 1");
  last.bind(1, job_id);
  std::int64_t measured = 0;
  double best = median_us;
  if (last.step()) {
    measured = last.column(0).int64();
    best = std::min(best, last.column(1).real());
  }
  db::Statement insert(db,
                       "INSERT INTO job_convergence (job_id, measured, variant_id, median_us,"
                       " best_us) VALUES (?, ?, ?, ?, ?)");
  insert.bind(1, job_id);
  insert.bind(2, measured + 1);
  insert.bind(3, variant_id);
  insert.bind(4, median_us);
  insert.bind(5, best);
  insert.exec();
}

std::vector<ConvergencePoint> ConvergenceStore::convergence(std::int64_t job_id) {
  const auto reader = readers_.acquire();
  return db::with_context("convergence of job " + std::to_string(job_id), [&] {
    db::Statement query(*reader,
                        "SELECT measured, variant_id, median_us, best_us FROM job_convergence"
                        " WHERE job_id = ? ORDER BY measured");
    query.bind(1, job_id);
    std::vector<ConvergencePoint> points;
    while (query.step())
      points.push_back({query.column(0).int64(), query.column(1).int64(), query.column(2).real(),
                        query.column(3).real()});
    return points;
  });
}

}  // namespace kt::db
