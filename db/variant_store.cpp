// kt::Store: planned variants, their compile results and outcomes (measurements), and progress.
#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "db/connection.hpp"
#include "db/convergence_store.hpp"
#include "db/pareto_store.hpp"
#include "db/rows.hpp"
#include "db/store.hpp"

namespace kt {
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

// Replaces the job's pruned counts (a resumed job re-plans the same space).
void write_pruned_groups(db::Connection& db, std::int64_t job_id,
                         const std::vector<PrunedGroup>& groups) {
  db::Statement clear(db, "DELETE FROM pruned_configs WHERE job_id = ?");
  clear.bind(1, job_id);
  clear.exec();
  db::Statement insert(db,
                       "INSERT INTO pruned_configs (job_id, template_name, reason, count,"
                       " examples_json) VALUES (?, ?, ?, ?, ?)"
                       " ON CONFLICT (job_id, template_name, reason)"
                       " DO UPDATE SET count = pruned_configs.count + excluded.count");
  for (const PrunedGroup& group : groups) {
    nlohmann::json examples = nlohmann::json::array();
    for (std::size_t i = 0; i < group.examples.size() && i < kPrunedExamples; ++i)
      examples.push_back(to_json(group.examples[i]));
    insert.bind(1, job_id);
    insert.bind(2, group.template_name);
    insert.bind(3, group.reason);
    insert.bind(4, group.count);
    insert.bind(5, examples.dump());
    insert.exec();
    insert.reset();
  }
}

constexpr int kPlanColumns = 14;
// 256 rows of 14 parameters stay far below SQLite's (32766) and PostgreSQL's (65535) limits.
constexpr std::size_t kPlanRowsPerInsert = 256;

// Inserts `rows` planned variants. DO NOTHING on UNIQUE(job_id, template_name, config_key): a
// resumed job re-plans the same space and keeps what it already finished.
std::string plan_insert_sql(std::size_t rows) {
  std::string sql =
      "INSERT INTO variants (job_id, template_name, config_json, config_key, status,"
      " failed_gate, reason, compile_log, kernel_key, registers, spill_bytes, smem_bytes,"
      " threads, compile_ms) VALUES ";
  for (std::size_t row = 0; row < rows; ++row)
    sql += row == 0 ? "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    : ", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  return sql + " ON CONFLICT (job_id, template_name, config_key) DO NOTHING";
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

std::vector<VariantRecord> Store::plan_variants(std::int64_t job_id,
                                                const std::vector<VariantRecord>& planned,
                                                const std::vector<PrunedGroup>& pruned) {
  std::lock_guard lock(mutex_);
  return db::with_context("plan_variants for job " + std::to_string(job_id), [&] {
    touches_job(job_id);
    db::Transaction transaction(*db_, db::TransactionKind::write);
    if (!db::load_job(*db_, job_id))
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
    for (const VariantRecord& v : planned)
      if (v.status == VariantStatus::pruned)
        throw std::invalid_argument(
            "plan_variants: pruned configurations are stored as counts"
            " (PrunedGroup), not as variant rows");
    // Up to kPlanRowsPerInsert rows per statement: one round trip each to a PostgreSQL server.
    for (std::size_t first = 0; first < planned.size(); first += kPlanRowsPerInsert) {
      const std::size_t rows = std::min(kPlanRowsPerInsert, planned.size() - first);
      db::Statement insert(*db_, plan_insert_sql(rows));
      for (std::size_t row = 0; row < rows; ++row) {
        const VariantRecord& v = planned[first + row];
        const int at = static_cast<int>(row) * kPlanColumns;
        insert.bind(at + 1, job_id);
        insert.bind(at + 2, v.template_name);
        insert.bind(at + 3, to_json(v.config).dump());
        insert.bind(at + 4, v.config_key.empty() ? canonical_key(v.config) : v.config_key);
        insert.bind(at + 5, std::string(to_string(v.status)));
        insert.bind(at + 6, v.failed_gate);
        insert.bind(at + 7, v.reason);
        insert.bind(at + 8, v.compile_log);
        insert.bind(at + 9, v.kernel_key);
        insert.bind(at + 10, v.registers);
        insert.bind(at + 11, v.spill_bytes);
        insert.bind(at + 12, v.smem_bytes);
        insert.bind(at + 13, v.threads);
        insert.bind(at + 14, v.compile_ms);
      }
      insert.exec();
    }
    write_pruned_groups(*db_, job_id, pruned);
    auto variants = db::load_variants(*db_, job_id);
    transaction.commit();
    return variants;
  });
}

std::vector<VariantRecord> Store::variants(std::int64_t job_id, bool gated_only) {
  const auto reader = readers_->acquire();
  return db::with_context("variants of job " + std::to_string(job_id),
                          [&] { return db::load_variants(*reader, job_id, gated_only); });
}

VariantPage Store::variant_page(std::int64_t job_id, const VariantPageQuery& query) {
  const auto reader = readers_->acquire();
  return db::with_context("a page of the variants of job " + std::to_string(job_id),
                          [&] { return db::load_variant_page(*reader, job_id, query); });
}

void Store::record_loaded_resources(std::int64_t variant_id, int registers, int smem_bytes) {
  std::lock_guard lock(mutex_);
  db::with_context("record_loaded_resources for variant " + std::to_string(variant_id), [&] {
    touches_job_of_variant(variant_id);
    db::Transaction transaction(*db_, db::TransactionKind::write);
    require_lease(variant_id);
    db::Statement update(*db_,
                         "UPDATE variants SET registers = CASE WHEN ? >= 0 THEN ? ELSE registers"
                         " END, smem_bytes = CASE WHEN ? >= 0 THEN ? ELSE smem_bytes END"
                         " WHERE id = ?");
    update.bind(1, registers);
    update.bind(2, registers);
    update.bind(3, smem_bytes);
    update.bind(4, smem_bytes);
    update.bind(5, variant_id);
    update.exec();
    transaction.commit();
  });
}

std::optional<VariantRecord> Store::fastest_variant(std::int64_t job_id) {
  const auto reader = readers_->acquire();
  return db::with_context("fastest variant of job " + std::to_string(job_id),
                          [&] { return db::load_fastest_variant(*reader, job_id); });
}

std::optional<VariantRecord> Store::variant(std::int64_t id) {
  const auto reader = readers_->acquire();
  return db::with_context("variant " + std::to_string(id),
                          [&] { return db::load_variant(*reader, id); });
}

void Store::record_compile(std::int64_t variant_id, const CompileResult& result, int threads,
                           int dynamic_smem_bytes) {
  std::lock_guard lock(mutex_);
  db::with_context("record_compile for variant " + std::to_string(variant_id), [&] {
    touches_job_of_variant(variant_id);
    db::Transaction transaction(*db_, db::TransactionKind::write);
    require_lease(variant_id);
    // A failed compile has no resource report: keep the "unknown" values.
    const ResourceUsage& r = result.resources;
    db::Statement update(
        *db_,
        "UPDATE variants SET kernel_key = ?, compile_log = ?, registers = ?, spill_bytes = ?,"
        " smem_bytes = ?, threads = ?, compile_ms = ? WHERE id = ?");
    update.bind(1, result.ok ? result.key : std::string());
    update.bind(2, result.log);
    update.bind(3, result.ok ? r.registers : -1);
    const bool spills_known = r.spill_store_bytes >= 0 && r.spill_load_bytes >= 0;
    update.bind(4, result.ok && spills_known ? r.spill_store_bytes + r.spill_load_bytes : -1);
    update.bind(5, result.ok ? r.static_smem_bytes + dynamic_smem_bytes : -1);
    update.bind(6, threads);
    update.bind(7, result.compile_ms);
    update.bind(8, variant_id);
    if (update.exec() == 0)
      throw std::invalid_argument("variant " + std::to_string(variant_id) + " does not exist");
    transaction.commit();
  });
}

void Store::record_outcome(std::int64_t variant_id, const VariantOutcome& outcome) {
  std::lock_guard lock(mutex_);
  db::with_context("record_outcome for variant " + std::to_string(variant_id), [&] {
    db::Transaction transaction(*db_, db::TransactionKind::write);
    require_lease(variant_id);
    write_outcome(variant_id, outcome);
    transaction.commit();
  });
}

void Store::write_outcome(std::int64_t variant_id, const VariantOutcome& outcome) {
  {
    const auto before = db::load_variant(*db_, variant_id);
    if (!before)
      throw std::invalid_argument("variant " + std::to_string(variant_id) + " does not exist");
    const auto job = db::load_job(*db_, before->job_id);
    if (!job) throw std::runtime_error("variant " + std::to_string(variant_id) + " has no job");
    // The rows just read say what this write touches (no lookup of its own, as others need).
    mutex_.touches_job(job->id);
    if (job->mode == JobMode::tune) mutex_.touches_fronts();

    // An outcome ends the variant's lease: nobody writes it again but its lease holder, now gone.
    db::Statement update(*db_,
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
      write_measurement(*db_, variant_id, outcome, speedup);
    } else {
      db::Statement clear(*db_, "DELETE FROM measurements WHERE variant_id = ?");
      clear.bind(1, variant_id);
      clear.exec();
    }

    // Re-recording replaces the variant's old point rather than competing with it.
    db::remove_from_front(*db_, variant_id);
    // Only tuned (not compile-only) results that were checked and timed rank on a front.
    if (outcome.status == VariantStatus::measured && job->mode == JobMode::tune && outcome.timing &&
        outcome.error) {
      const auto after = db::load_variant(*db_, variant_id);
      db::add_to_front(*db_, *job, *after);
    }
    update_best_variant(*db_, before->job_id);
    if (outcome.status == VariantStatus::measured && job->mode == JobMode::tune && outcome.timing)
      db::append_convergence(*db_, before->job_id, variant_id, outcome.timing->median_us);
  }
}

JobProgress Store::progress(std::int64_t job_id) {
  const auto reader = readers_->acquire();
  return db::with_context("progress of job " + std::to_string(job_id), [&] {
    db::Statement query(*reader,
                        "SELECT status, count FROM job_counts WHERE job_id = ?1 AND count > 0"
                        " UNION ALL SELECT 'pruned', SUM(count) FROM pruned_configs"
                        " WHERE job_id = ?1 HAVING SUM(count) > 0");
    query.bind(1, job_id);
    JobProgress progress;
    while (query.step()) {
      const std::string status = query.column(0).text();
      const std::int64_t count = query.column(1).int64();
      progress.by_status[status] += count;
      progress.total += count;
      if (status != "pending") progress.finished += count;
    }
    return progress;
  });
}

std::vector<PrunedGroup> Store::pruned_groups(std::int64_t job_id) {
  const auto reader = readers_->acquire();
  return db::with_context("pruned configurations of job " + std::to_string(job_id), [&] {
    db::Statement query(*reader,
                        "SELECT template_name, reason, count, examples_json"
                        " FROM pruned_configs WHERE job_id = ?"
                        " ORDER BY count DESC, template_name, reason");
    query.bind(1, job_id);
    std::vector<PrunedGroup> groups;
    while (query.step()) {
      PrunedGroup group;
      group.template_name = query.column(0).text();
      group.reason = query.column(1).text();
      group.count = query.column(2).int64();
      for (const auto& example : nlohmann::json::parse(query.column(3).text()))
        group.examples.push_back(int_map_from_json(example));
      groups.push_back(std::move(group));
    }
    return groups;
  });
}

}  // namespace kt
