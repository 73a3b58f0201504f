// The stored Pareto fronts, and the fronts, tuned problems and /v1/best read from them.
#include "db/pareto_store.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

#include "db/job_keys.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"
#include "tuner/pareto.hpp"

namespace kt::db {

double footprint_bytes(const VariantRecord& variant) {
  const double smem = std::max(variant.smem_bytes, 0);
  const double registers = std::max(variant.registers, 0);
  return smem + 4.0 * registers * std::max(variant.threads, 0);
}

namespace {

// A point of a front with the keys its job was tuned with.
struct KeyedPoint {
  ParetoPoint point;
  ResultKeys keys;
};

}  // namespace

void add_to_front(db::Connection& db, const JobRecord& job, const VariantRecord& variant) {
  if (!variant.timing || !variant.error)
    throw std::logic_error("add_to_front: variant " + std::to_string(variant.id) +
                           " has no timing or error");
  auto bind_problem = [&](db::Statement& statement) {
    statement.bind(1, job.device_name);
    statement.bind(2, job.family);
    statement.bind(3, job.dtype);
    statement.bind(4, job.shape_key);
  };

  // A re-tune after a change of driver, NVRTC or family source replaces the older results: their
  // points leave the front even where they are faster, so /v1/best answers with what holds now.
  std::vector<ParetoPoint> points;
  db::Statement old_front(
      db,
      "SELECT p.variant_id, p.median_us, p.max_error, p.footprint, j.driver_version,"
      " j.nvrtc_version, j.family_hash FROM pareto p JOIN variants v ON v.id = p.variant_id"
      " JOIN jobs j ON j.id = v.job_id WHERE p.device_name = ? AND p.family = ? AND p.dtype = ?"
      " AND p.shape_key = ?");
  bind_problem(old_front);
  while (old_front.step()) {
    KeyedPoint old{{old_front.column(0).int64(), old_front.column(1).real(),
                    old_front.column(2).real(), old_front.column(3).real()},
                   {job.device_name, old_front.column(4).integer(), old_front.column(5).text(),
                    old_front.column(6).text()}};
    // Tuned with another driver, NVRTC or family source than the job being recorded: stale next
    // to it. A key unknown on either side (results from before the keys) never supersedes.
    if (changed_keys(old.keys, stored_keys(job)).empty()) points.push_back(old.point);
  }
  points.push_back(
      {variant.id, variant.timing->median_us, variant.error->max_rel, footprint_bytes(variant)});

  db::Statement clear(
      db,
      "DELETE FROM pareto WHERE device_name = ? AND family = ? AND dtype = ? AND shape_key = ?");
  bind_problem(clear);
  clear.exec();
  db::Statement insert(db,
                       "INSERT INTO pareto (device_name, family, dtype, shape_key, variant_id,"
                       " median_us, max_error, footprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const ParetoPoint& point : pareto_front(std::move(points))) {
    bind_problem(insert);
    insert.bind(5, point.variant_id);
    insert.bind(6, point.median_us);
    insert.bind(7, point.max_error);
    insert.bind(8, point.footprint);
    insert.exec();
    insert.reset();
  }
}

void remove_from_front(db::Connection& db, std::int64_t variant_id) {
  db::Statement remove(db, "DELETE FROM pareto WHERE variant_id = ?");
  remove.bind(1, variant_id);
  remove.exec();
}

namespace {

// Pareto rows of one problem joined to their variants; device "" matches every device model.
const char* const kFrontQuery =
    " JOIN pareto p ON p.variant_id = v.id"
    " WHERE p.family = ?1 AND p.dtype = ?2 AND p.shape_key = ?3"
    " AND (?4 = '' OR p.device_name = ?4)"
    " ORDER BY p.median_us, v.id";

}  // namespace

std::vector<VariantRecord> ParetoStore::pareto(const std::string& family, const std::string& dtype,
                                               const std::string& shape_key,
                                               const std::string& device_name) {
  const auto reader = readers_.acquire();
  return db::with_context("pareto", [&] {
    db::Statement query(*reader, std::string(db::kVariantSelect) + kFrontQuery);
    query.bind(1, family);
    query.bind(2, dtype);
    query.bind(3, shape_key);
    query.bind(4, device_name);
    std::vector<VariantRecord> front;
    while (query.step()) front.push_back(db::read_variant(query));
    return front;
  });
}

std::optional<BestEntry> ParetoStore::best(const std::string& family, const std::string& dtype,
                                           const std::string& shape_key,
                                           const std::string& device_name) {
  // Bounded: distinct questions beyond this empty the cache rather than grow it.
  constexpr std::size_t kMaxCachedBest = 4096;
  const std::string key = family + '\n' + dtype + '\n' + shape_key + '\n' + device_name;
  // Read before the query: a write that commits meanwhile makes the entry stale at once.
  const std::uint64_t writes = writer_.fronts_stamp();
  {
    std::lock_guard lock(best_cache_mutex_);
    const auto cached = best_cache_.find(key);
    if (cached != best_cache_.end() && cached->second.writes == writes) return cached->second.entry;
  }
  std::optional<BestEntry> entry = query_best(family, dtype, shape_key, device_name);
  std::lock_guard lock(best_cache_mutex_);
  if (best_cache_.size() >= kMaxCachedBest) best_cache_.clear();
  best_cache_.insert_or_assign(key, CachedBest{writes, entry});
  return entry;
}

std::optional<BestEntry> ParetoStore::query_best(const std::string& family,
                                                 const std::string& dtype,
                                                 const std::string& shape_key,
                                                 const std::string& device_name) {
  const auto reader = readers_.acquire();
  return db::with_context("best", [&]() -> std::optional<BestEntry> {
    // One read transaction, so the variant and its job come from the same snapshot.
    db::Transaction snapshot(*reader, db::TransactionKind::snapshot);
    db::Statement query(*reader, std::string(db::kVariantSelect) + kFrontQuery + " LIMIT 1");
    query.bind(1, family);
    query.bind(2, dtype);
    query.bind(3, shape_key);
    query.bind(4, device_name);
    if (!query.step()) return std::nullopt;
    BestEntry entry;
    entry.variant = db::read_variant(query);
    auto job = db::load_job(*reader, entry.variant.job_id);
    if (!job)
      throw std::runtime_error("front variant " + std::to_string(entry.variant.id) + " has no job");
    entry.job = std::move(*job);
    return entry;
  });
}

std::vector<TunedProblem> ParetoStore::tuned_problems(const std::string& family,
                                                      const std::string& device_name, int limit) {
  const auto reader = readers_.acquire();
  return db::with_context("tuned problems", [&] {
    db::Transaction snapshot(*reader, db::TransactionKind::snapshot);
    // The front's fastest point per problem, from the primary key's (problem, variant) order.
    db::Statement query(*reader,
                        "SELECT device_name, family, dtype, shape_key,"
                        " (SELECT b.variant_id FROM pareto b WHERE b.device_name = p.device_name"
                        " AND b.family = p.family AND b.dtype = p.dtype"
                        " AND b.shape_key = p.shape_key ORDER BY b.median_us, b.variant_id"
                        " LIMIT 1), MIN(median_us), COUNT(*) FROM pareto p"
                        " WHERE (?1 = '' OR family = ?1) AND (?2 = '' OR device_name = ?2)"
                        " GROUP BY device_name, family, dtype, shape_key"
                        " ORDER BY family, device_name, dtype, shape_key LIMIT ?3");
    query.bind(1, family);
    query.bind(2, device_name);
    query.bind(3, limit);
    std::vector<TunedProblem> problems;
    while (query.step()) {
      TunedProblem problem;
      problem.device_name = query.column(0).text();
      problem.family = query.column(1).text();
      problem.dtype = query.column(2).text();
      problem.shape_key = query.column(3).text();
      problem.front_size = query.column(6).integer();
      auto best = db::load_variant(*reader, query.column(4).int64());
      if (!best)
        throw std::runtime_error("front variant " + std::to_string(query.column(4).int64()) +
                                 " is missing");
      problem.best = std::move(*best);
      problems.push_back(std::move(problem));
    }
    return problems;
  });
}

std::vector<std::string> ParetoStore::tuned_shape_keys(const std::string& family,
                                                       const std::string& dtype,
                                                       const std::string& device_name, int limit) {
  const auto reader = readers_.acquire();
  return db::with_context("tuned shape keys", [&] {
    // Two statements rather than "?3 = '' OR": each is a range of one index (the primary key
    // (device_name, family, dtype, shape_key, ...) with a model, pareto_by_problem(family, dtype,
    // shape_key, ...) without), covering, one row per front point of the family's problems.
    const bool any_model = device_name.empty();
    db::Statement query(*reader,
                        any_model ? "SELECT DISTINCT shape_key FROM pareto"
                                    " WHERE family = ?1 AND dtype = ?2 ORDER BY shape_key LIMIT ?3"
                                  : "SELECT DISTINCT shape_key FROM pareto WHERE device_name = ?4"
                                    " AND family = ?1 AND dtype = ?2 ORDER BY shape_key LIMIT ?3");
    query.bind(1, family);
    query.bind(2, dtype);
    query.bind(3, limit);
    if (!any_model) query.bind(4, device_name);
    std::vector<std::string> keys;
    while (query.step()) keys.push_back(query.column(0).text());
    return keys;
  });
}

std::vector<VariantRecord> ParetoStore::fastest_variants(std::int64_t job_id, int limit) {
  const auto reader = readers_.acquire();
  return db::with_context("fastest variants", [&] {
    // variants_by_job_status(job_id, status): the job's measured rows only.
    db::Statement query(*reader, std::string(db::kVariantSelect) +
                                     " WHERE v.job_id = ?1 AND v.status = 'measured'"
                                     " AND m.median_us IS NOT NULL ORDER BY m.median_us, v.id"
                                     " LIMIT ?2");
    query.bind(1, job_id);
    query.bind(2, limit);
    std::vector<VariantRecord> rows;
    while (query.step()) rows.push_back(db::read_variant(query));
    return rows;
  });
}

std::optional<JobRecord> ParetoStore::newest_baseline_job(const std::string& family,
                                                          const std::string& dtype,
                                                          const std::string& shape_key,
                                                          const std::string& device_name) {
  const auto reader = readers_.acquire();
  return db::with_context("newest_baseline_job", [&]() -> std::optional<JobRecord> {
    db::Transaction snapshot(*reader, db::TransactionKind::snapshot);
    // jobs_by_family(family, id) walks the family's jobs newest first.
    db::Statement query(*reader,
                        "SELECT id FROM jobs WHERE family = ?1 AND dtype = ?2 AND"
                        " shape_key = ?3 AND (?4 = '' OR device_name = ?4) AND mode = 'tune'"
                        " AND status = 'done' AND baselines_json NOT IN ('', '{}')"
                        " ORDER BY id DESC LIMIT 1");
    query.bind(1, family);
    query.bind(2, dtype);
    query.bind(3, shape_key);
    query.bind(4, device_name);
    if (!query.step()) return std::nullopt;
    return db::load_job(*reader, query.column(0).int64());
  });
}

}  // namespace kt::db
