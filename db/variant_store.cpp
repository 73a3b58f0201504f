// kt::db::VariantStore: planned variants, their compile results and outcomes (measurements), and
// progress.
#include "db/variant_store.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "db/connection.hpp"
#include "db/convergence_store.hpp"
#include "db/lease_store.hpp"
#include "db/outcome_writer.hpp"
#include "db/pareto_store.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {
namespace {

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

}  // namespace

std::vector<VariantRecord> VariantStore::plan_variants(std::int64_t job_id,
                                                       const std::vector<VariantRecord>& planned,
                                                       const std::vector<PrunedGroup>& pruned) {
  std::lock_guard lock(writer_.mutex());
  return db::with_context("plan_variants for job " + std::to_string(job_id), [&] {
    writer_.touches_job(job_id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    if (!db::load_job(writer_.db(), job_id))
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
    for (const VariantRecord& v : planned)
      if (v.status == VariantStatus::pruned)
        throw std::invalid_argument(
            "plan_variants: pruned configurations are stored as counts"
            " (PrunedGroup), not as variant rows");
    // Up to kPlanRowsPerInsert rows per statement: one round trip each to a PostgreSQL server.
    for (std::size_t first = 0; first < planned.size(); first += kPlanRowsPerInsert) {
      const std::size_t rows = std::min(kPlanRowsPerInsert, planned.size() - first);
      db::Statement insert(writer_.db(), plan_insert_sql(rows));
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
    write_pruned_groups(writer_.db(), job_id, pruned);
    auto variants = db::load_variants(writer_.db(), job_id);
    transaction.commit();
    return variants;
  });
}

std::vector<VariantRecord> VariantStore::variants(std::int64_t job_id, bool gated_only) {
  const auto reader = readers_.acquire();
  return db::with_context("variants of job " + std::to_string(job_id),
                          [&] { return db::load_variants(*reader, job_id, gated_only); });
}

VariantPage VariantStore::variant_page(std::int64_t job_id, const VariantPageQuery& query) {
  const auto reader = readers_.acquire();
  return db::with_context("a page of the variants of job " + std::to_string(job_id),
                          [&] { return db::load_variant_page(*reader, job_id, query); });
}

void VariantStore::record_loaded_resources(std::int64_t variant_id, int registers, int smem_bytes) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_loaded_resources for variant " + std::to_string(variant_id), [&] {
    writer_.touches_job_of_variant(variant_id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    leases_.require_lease(variant_id);
    db::Statement update(writer_.db(),
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

std::optional<VariantRecord> VariantStore::fastest_variant(std::int64_t job_id) {
  const auto reader = readers_.acquire();
  return db::with_context("fastest variant of job " + std::to_string(job_id),
                          [&] { return db::load_fastest_variant(*reader, job_id); });
}

std::optional<VariantRecord> VariantStore::variant(std::int64_t id) {
  const auto reader = readers_.acquire();
  return db::with_context("variant " + std::to_string(id),
                          [&] { return db::load_variant(*reader, id); });
}

void VariantStore::record_compile(std::int64_t variant_id, const CompileResult& result, int threads,
                                  int dynamic_smem_bytes) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_compile for variant " + std::to_string(variant_id), [&] {
    writer_.touches_job_of_variant(variant_id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    leases_.require_lease(variant_id);
    // A failed compile has no resource report: keep the "unknown" values.
    const ResourceUsage& r = result.resources;
    db::Statement update(
        writer_.db(),
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

void VariantStore::record_outcome(std::int64_t variant_id, const VariantOutcome& outcome) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_outcome for variant " + std::to_string(variant_id), [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    leases_.require_lease(variant_id);
    db::write_outcome(writer_, variant_id, outcome);
    transaction.commit();
  });
}

JobProgress VariantStore::progress(std::int64_t job_id) {
  const auto reader = readers_.acquire();
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

std::vector<PrunedGroup> VariantStore::pruned_groups(std::int64_t job_id) {
  const auto reader = readers_.acquire();
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

}  // namespace kt::db
