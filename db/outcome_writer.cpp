#include "db/outcome_writer.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "db/connection.hpp"
#include "db/convergence_store.hpp"
#include "db/pareto_store.hpp"
#include "db/rows.hpp"

namespace kt::db {
namespace {

void bind_optional(db::Statement& statement, int index, const std::optional<double>& value) {
  if (value)
    statement.bind(index, *value);
  else
    statement.bind_null(index);
}

void write_measurement(db::Connection& db, std::int64_t variant_id, const VariantOutcome& outcome,
                       const std::optional<double>& speedup) {
  db::Statement insert(
      db,
      "INSERT INTO measurements (variant_id, median_us, min_us, p10_us, p90_us,"
      " mean_us, rel_noise, trials, converged, max_abs, max_rel, rel_l2, first_bad_index,"
      " non_finite, tflops, gbps, speedup, timing_method, launches_per_sample,"
      " discarded_samples, sm_clock_mhz, throttle_reasons, bad_elements, first_bad_output,"
      " first_bad_reference, tolerance_json, guard_damage)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
      " ON CONFLICT (variant_id) DO UPDATE SET median_us = excluded.median_us,"
      " min_us = excluded.min_us, p10_us = excluded.p10_us, p90_us = excluded.p90_us,"
      " mean_us = excluded.mean_us, rel_noise = excluded.rel_noise, trials = excluded.trials,"
      " converged = excluded.converged, max_abs = excluded.max_abs,"
      " max_rel = excluded.max_rel, rel_l2 = excluded.rel_l2,"
      " first_bad_index = excluded.first_bad_index, non_finite = excluded.non_finite,"
      " tflops = excluded.tflops, gbps = excluded.gbps, speedup = excluded.speedup,"
      " timing_method = excluded.timing_method,"
      " launches_per_sample = excluded.launches_per_sample,"
      " discarded_samples = excluded.discarded_samples, sm_clock_mhz = excluded.sm_clock_mhz,"
      " throttle_reasons = excluded.throttle_reasons, bad_elements = excluded.bad_elements,"
      " first_bad_output = excluded.first_bad_output,"
      " first_bad_reference = excluded.first_bad_reference,"
      " tolerance_json = excluded.tolerance_json, guard_damage = excluded.guard_damage");
  insert.bind(1, variant_id);
  if (const auto& t = outcome.timing) {
    insert.bind(2, t->median_us);
    insert.bind(3, t->min_us);
    insert.bind(4, t->p10_us);
    insert.bind(5, t->p90_us);
    insert.bind(6, t->mean_us);
    insert.bind(7, t->rel_noise);
    insert.bind(8, t->trials);
    insert.bind(9, t->converged ? 1 : 0);
  }  // unbound parameters are NULL
  if (const auto& e = outcome.error) {
    insert.bind(10, e->max_abs);
    insert.bind(11, e->max_rel);
    insert.bind(12, e->rel_l2);
    insert.bind(13, e->first_bad_index);
    insert.bind(14, e->non_finite);
  }
  const ErrorSummary checked = outcome.error.value_or(ErrorSummary{});
  insert.bind(23, checked.bad_elements);
  if (checked.first_bad_index >= 0) {  // NaN binds as NULL: the kernel left it unwritten
    insert.bind(24, checked.first_bad_output);
    insert.bind(25, checked.first_bad_reference);
  }
  insert.bind(26, checked.tolerance ? to_json(*checked.tolerance).dump() : std::string());
  insert.bind(27, checked.guard_damage);
  insert.bind(15, outcome.tflops);
  insert.bind(16, outcome.gbps);
  bind_optional(insert, 17, speedup);
  const TimingSummary how = outcome.timing.value_or(TimingSummary{});
  insert.bind(18, how.method);
  insert.bind(19, how.launches_per_sample);
  insert.bind(20, how.discarded_samples);
  if (how.sm_clock_mhz >= 0) {  // without NVML both stay NULL: unknown, not "no throttling"
    insert.bind(21, how.sm_clock_mhz);
    insert.bind(22, static_cast<std::int64_t>(how.throttle_reasons));
  }
  insert.exec();
}

// Keeps jobs.best_variant_id the job's measured variant with the lowest median (one indexed
// pass over the job's measured rows, paid by the writer so that readers look it up).
void update_best_variant(db::Connection& db, std::int64_t job_id) {
  db::Statement update(db,
                       "UPDATE jobs SET best_variant_id = (SELECT v.id FROM variants v"
                       " JOIN measurements m ON m.variant_id = v.id"
                       " WHERE v.job_id = ?1 AND v.status = 'measured' AND m.median_us IS NOT NULL"
                       " ORDER BY m.median_us, v.id LIMIT 1) WHERE id = ?1");
  update.bind(1, job_id);
  update.exec();
}

}  // namespace

void write_outcome(StoreWriter& writer, std::int64_t variant_id, const VariantOutcome& outcome) {
  db::Connection& db = writer.db();
  const auto before = db::load_variant(db, variant_id);
  if (!before)
    throw std::invalid_argument("variant " + std::to_string(variant_id) + " does not exist");
  const auto job = db::load_job(db, before->job_id);
  if (!job) throw std::runtime_error("variant " + std::to_string(variant_id) + " has no job");
  // The rows just read say what this write touches (no lookup of its own, as others need).
  writer.mutex().touches_job(job->id);
  if (job->mode == JobMode::tune) writer.mutex().touches_fronts();

  // An outcome ends the variant's lease: nobody writes it again but its lease holder, now gone.
  db::Statement update(db,
                       "UPDATE variants SET status = ?, failed_gate = ?, reason = ?,"
                       " lease_owner = NULL, lease_expires_ms = NULL WHERE id = ?");
  update.bind(1, std::string(to_string(outcome.status)));
  update.bind(2, outcome.failed_gate);
  update.bind(3, outcome.reason);
  update.bind(4, variant_id);
  update.exec();

  std::optional<double> speedup = outcome.speedup;
  if (!speedup && job->reference_us && outcome.timing && outcome.timing->median_us > 0)
    speedup = *job->reference_us / outcome.timing->median_us;
  if (outcome.timing || outcome.error) {
    write_measurement(db, variant_id, outcome, speedup);
  } else {
    db::Statement clear(db, "DELETE FROM measurements WHERE variant_id = ?");
    clear.bind(1, variant_id);
    clear.exec();
  }

  // Re-recording replaces the variant's old point rather than competing with it.
  db::remove_from_front(db, variant_id);
  // Only tuned (not compile-only) results that were checked and timed rank on a front.
  if (outcome.status == VariantStatus::measured && job->mode == JobMode::tune && outcome.timing &&
      outcome.error) {
    const auto after = db::load_variant(db, variant_id);
    db::add_to_front(db, *job, *after);
  }
  update_best_variant(db, before->job_id);
  if (outcome.status == VariantStatus::measured && job->mode == JobMode::tune && outcome.timing)
    db::append_convergence(db, before->job_id, variant_id, outcome.timing->median_us);
}

}  // namespace kt::db
