#include "db/job_store.hpp"

#include <limits>
#include <mutex>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {
namespace {

// Moves a job into a final or running state. Cancelling also closes its pending variants, so
// their counts add up to the plan; returns how many it closed. Runs inside the caller's
// transaction.
std::int64_t write_job_status(db::Connection& db, std::int64_t id, JobStatus status,
                              const std::string& reason) {
  const std::string now = db::now_sql(db.dialect());
  db::Statement update(db,
                       "UPDATE jobs SET status = ?1, reason = ?2,"
                       " started_at = CASE WHEN ?1 = 'running' AND started_at = '' THEN " +
                           now +
                           " ELSE started_at END,"
                           " finished_at = CASE WHEN ?1 IN ('done','failed','cancelled') THEN " +
                           now +
                           " ELSE finished_at END"
                           " WHERE id = ?3 AND status NOT IN ('done','failed','cancelled')");
  update.bind(1, std::string(to_string(status)));
  update.bind(2, reason);
  update.bind(3, id);
  if (update.exec() == 0 || status != JobStatus::cancelled) return 0;
  db::Statement close_pending(db,
                              "UPDATE variants SET status = 'cancelled', reason = 'job cancelled',"
                              " lease_owner = NULL, lease_expires_ms = NULL"
                              " WHERE job_id = ? AND status = 'pending'");
  close_pending.bind(1, id);
  return close_pending.exec();
}

}  // namespace
std::int64_t JobStore::create_job(const NewJob& job) {
  std::lock_guard lock(writer_.mutex());
  return db::with_context("create_job", [&] {
    db::Statement insert(
        writer_.db(),
        std::string("INSERT INTO jobs (family, shape_json, shape_key, dtype, mode, arch,"
                    " device_uuid, device_name, budget, pipeline, pinned_configs_json,"
                    " search, search_seconds, search_patience, driver_version,"
                    " nvrtc_version, family_hash, warm_start_json, status, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                    " 'queued', ") +
            db::now_sql(writer_.db().dialect()) + ") RETURNING id");
    insert.bind(1, job.family);
    insert.bind(2, to_json(job.shape).dump());
    insert.bind(3, canonical_key(job.shape));
    insert.bind(4, job.dtype);
    insert.bind(5, std::string(to_string(job.mode)));
    insert.bind(6, job.arch);
    insert.bind(7, job.device_uuid);
    insert.bind(8, job.device_name);
    insert.bind(9, job.budget);
    insert.bind(10, std::string(to_string(job.pipeline)));
    insert.bind(11, job.pinned_configs_json);
    insert.bind(12, job.search);
    insert.bind(13, job.search_seconds);
    insert.bind(14, job.search_patience);
    insert.bind(15, job.driver_version);
    insert.bind(16, job.nvrtc_version);
    insert.bind(17, job.family_hash);
    insert.bind(18, job.warm_start_json);
    if (!insert.step()) throw std::runtime_error("insert returned no job id");
    const std::int64_t id = insert.column(0).int64();
    insert.step();  // finish the statement so the write completes before returning
    writer_.mutex().touches_job(id);  // a new job is on no front yet
    return id;
  });
}

std::optional<JobRecord> JobStore::job(std::int64_t id) {
  const auto reader = readers_.acquire();
  return db::with_context("job " + std::to_string(id), [&] { return db::load_job(*reader, id); });
}

std::vector<JobRecord> JobStore::jobs(const JobFilter& filter) {
  const auto reader = readers_.acquire();
  return db::with_context("jobs", [&] {
    // CAST: an unbound parameter is a NULL whose type PostgreSQL could not determine.
    db::Statement query(*reader, std::string(db::kJobSelect) +
                                     " WHERE (?1 = '' OR family = ?1)"
                                     " AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)"
                                     " AND (CAST(?5 AS TEXT) IS NULL OR mode = ?5)"
                                     " ORDER BY id DESC LIMIT ?3 OFFSET ?4");
    query.bind(1, filter.family);
    if (filter.status) query.bind(2, std::string(to_string(*filter.status)));
    if (filter.mode) query.bind(5, std::string(to_string(*filter.mode)));
    // A negative limit means none (PostgreSQL refuses a negative LIMIT).
    query.bind(3, filter.limit < 0 ? std::numeric_limits<std::int64_t>::max()
                                   : static_cast<std::int64_t>(filter.limit));
    query.bind(4, filter.offset < 0 ? 0 : filter.offset);
    std::vector<JobRecord> out;
    while (query.step()) out.push_back(db::read_job(query));
    return out;
  });
}

JobPage JobStore::job_page(const JobFilter& filter, std::int64_t before_id) {
  if (filter.limit < 1) throw std::invalid_argument("a job page needs a limit of at least 1");
  const auto reader = readers_.acquire();
  return db::with_context("a page of jobs", [&] {
    // Keyset on the primary key (id < cursor), newest first; the deprecated offset still skips
    // rows after the cursor. One row past the limit says whether another page follows.
    db::Statement query(*reader, std::string(db::kJobSelect) +
                                     " WHERE (?1 = '' OR family = ?1)"
                                     " AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)"
                                     " AND id < ?5"
                                     " AND (CAST(?6 AS TEXT) IS NULL OR mode = ?6)"
                                     " ORDER BY id DESC LIMIT ?3 OFFSET ?4");
    query.bind(1, filter.family);
    if (filter.status) query.bind(2, std::string(to_string(*filter.status)));
    if (filter.mode) query.bind(6, std::string(to_string(*filter.mode)));
    query.bind(3, filter.limit + 1);
    query.bind(4, filter.offset < 0 ? 0 : filter.offset);
    query.bind(5, before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max());
    JobPage page;
    while (query.step()) {
      if (static_cast<int>(page.jobs.size()) == filter.limit) {
        page.next_before_id = page.jobs.back().id;
        break;
      }
      page.jobs.push_back(db::read_job(query));
    }
    return page;
  });
}

std::vector<std::int64_t> JobStore::unfinished_jobs() {
  const auto reader = readers_.acquire();
  return db::with_context("unfinished_jobs", [&] {
    db::Statement query(*reader,
                        "SELECT id FROM jobs WHERE status IN ('queued','running') ORDER BY id");
    std::vector<std::int64_t> out;
    while (query.step()) out.push_back(query.column(0).int64());
    return out;
  });
}

std::int64_t JobStore::set_job_status(std::int64_t id, JobStatus status,
                                      const std::string& reason) {
  std::lock_guard lock(writer_.mutex());
  return db::with_context("set_job_status " + std::to_string(id), [&] {
    writer_.touches_job(id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    const std::int64_t closed = write_job_status(writer_.db(), id, status, reason);
    transaction.commit();
    return closed;
  });
}

void JobStore::set_job_reference(std::int64_t id, double reference_us) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("set_job_reference " + std::to_string(id), [&] {
    writer_.touches_job(id);
    db::Statement update(writer_.db(), "UPDATE jobs SET reference_us = ? WHERE id = ?");
    update.bind(1, reference_us);
    update.bind(2, id);
    update.exec();
  });
}

bool JobStore::request_cancel(std::int64_t id) {
  std::lock_guard lock(writer_.mutex());
  return db::with_context("request_cancel " + std::to_string(id), [&] {
    writer_.touches_job(id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    const auto job = db::load_job(writer_.db(), id);
    if (!job || (job->status != JobStatus::queued && job->status != JobStatus::running))
      return false;
    db::Statement flag(writer_.db(), "UPDATE jobs SET cancel_requested = 1 WHERE id = ?");
    flag.bind(1, id);
    flag.exec();
    // Nothing runs a queued job yet, so nobody else would ever finish it.
    if (job->status == JobStatus::queued)
      write_job_status(writer_.db(), id, JobStatus::cancelled, "cancelled before it started");
    transaction.commit();
    return true;
  });
}

}  // namespace kt::db
