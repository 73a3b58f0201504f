// kt::Store: opening the database, devices and jobs. Variants, measurements and the Pareto front
// are in variant_store.cpp and pareto_store.cpp, the compile cache in kernel_store.cpp.
#include "db/store.hpp"

#include <limits>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/rows.hpp"
#include "db/schema.hpp"

namespace kt {
namespace {

// Moves a job into a final or running state. Cancelling also closes its pending variants, so
// their counts add up to the plan. Runs inside the caller's transaction.
void write_job_status(db::Connection& db, std::int64_t id, JobStatus status,
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
  if (update.exec() == 0 || status != JobStatus::cancelled) return;
  db::Statement close_pending(db,
                              "UPDATE variants SET status = 'cancelled', reason = 'job cancelled',"
                              " lease_owner = NULL, lease_expires_ms = NULL"
                              " WHERE job_id = ? AND status = 'pending'");
  close_pending.bind(1, id);
  close_pending.exec();
}

}  // namespace

Store::Store(const std::filesystem::path& path, int read_connections) {
  const std::string location = path.string();
  try {
    health_ = std::make_shared<db::StoreHealth>(db::is_postgresql_uri(location) ? "postgresql"
                                                                                : "sqlite");
    db_ = db::open_connection(location, db::Access::write, health_);
    db::migrate(*db_);
    shared_ = db_->dialect() == db::Dialect::postgresql;
    // After the migration: a reader must never see a half-made schema.
    readers_ = std::make_unique<db::ReadPool>(location, read_connections, health_);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot open kerntune database " + db::redacted_location(location) +
                             ": " + e.what());
  }
}

Store::~Store() = default;

void Store::touches_job(std::int64_t job_id) {
  db::Statement query(*db_, "SELECT mode FROM jobs WHERE id = ?");
  query.bind(1, job_id);
  mutex_.touches_job(job_id);
  // An unknown job: the write changes nothing (it will throw); a tune job's rows reach /v1/best.
  if (query.step() && query.column(0).text() == to_string(JobMode::tune)) mutex_.touches_fronts();
}

void Store::touches_job_of_variant(std::int64_t variant_id) {
  db::Statement query(*db_,
                      "SELECT v.job_id, j.mode FROM variants v JOIN jobs j ON j.id = v.job_id"
                      " WHERE v.id = ?");
  query.bind(1, variant_id);
  if (!query.step()) {
    mutex_.touches_no_answer();  // no such variant: the write changes nothing
    return;
  }
  mutex_.touches_job(query.column(0).int64());
  if (query.column(1).text() == to_string(JobMode::tune)) mutex_.touches_fronts();
}

void Store::observe_statements(db::StatementObserver observer) {
  {
    std::lock_guard lock(mutex_);
    writer_observer_ = observer ? std::make_unique<db::StatementObserver>(observer) : nullptr;
    db_->observe(writer_observer_.get());
  }
  readers_->observe(std::move(observer));
}

int Store::schema_version() {
  const auto reader = readers_->acquire();
  return db::with_context("schema_version", [&] { return db::read_schema_version(*reader); });
}

std::int64_t Store::upsert_device(const DeviceInfo& d) {
  if (d.uuid.empty()) throw std::invalid_argument("upsert_device: a device needs a UUID");
  std::lock_guard lock(mutex_);
  return db::with_context("upsert_device " + d.uuid, [&] {
    const std::string now = db::now_sql(db_->dialect());
    db::Statement upsert(
        *db_,
        "INSERT INTO devices (uuid, name, ordinal, arch, sm_major, sm_minor, sm_count,"
        " memory_bytes, l2_bytes, smem_per_block_optin, smem_per_sm, max_threads_per_block,"
        " regs_per_block, clock_khz, driver_version, nvrtc_version, first_seen, last_seen)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, " +
            now + ", " + now +
            ") ON CONFLICT (uuid) DO UPDATE SET name = ?2, ordinal = ?3, arch = ?4,"
            " sm_major = ?5, sm_minor = ?6, sm_count = ?7, memory_bytes = ?8, l2_bytes = ?9,"
            " smem_per_block_optin = ?10, smem_per_sm = ?11, max_threads_per_block = ?12,"
            " regs_per_block = ?13, clock_khz = ?14, driver_version = ?15,"
            " nvrtc_version = ?16, last_seen = " +
            now + " RETURNING id");
    upsert.bind(1, d.uuid);
    upsert.bind(2, d.name);
    upsert.bind(3, d.ordinal);
    upsert.bind(4, d.arch);
    upsert.bind(5, d.sm_major);
    upsert.bind(6, d.sm_minor);
    upsert.bind(7, d.sm_count);
    upsert.bind(8, d.memory_bytes);
    upsert.bind(9, d.l2_bytes);
    upsert.bind(10, d.smem_per_block_optin);
    upsert.bind(11, d.smem_per_sm);
    upsert.bind(12, d.max_threads_per_block);
    upsert.bind(13, d.regs_per_block);
    upsert.bind(14, d.clock_khz);
    upsert.bind(15, d.driver_version);
    upsert.bind(16, d.nvrtc_version);
    if (!upsert.step()) throw std::runtime_error("upsert returned no row id");
    const std::int64_t id = upsert.column(0).int64();
    upsert.step();  // finish the statement so the write completes before returning
    return id;
  });
}

std::vector<DeviceInfo> Store::devices() {
  const auto reader = readers_->acquire();
  return db::with_context("devices", [&] {
    db::Statement query(*reader, "SELECT * FROM devices ORDER BY last_seen DESC, id");
    std::vector<DeviceInfo> out;
    while (query.step()) {
      DeviceInfo d;
      d.uuid = query.column("uuid").text();
      d.name = query.column("name").text();
      d.ordinal = query.column("ordinal").integer();
      d.arch = query.column("arch").text();
      d.sm_major = query.column("sm_major").integer();
      d.sm_minor = query.column("sm_minor").integer();
      d.sm_count = query.column("sm_count").integer();
      d.memory_bytes = query.column("memory_bytes").int64();
      d.l2_bytes = query.column("l2_bytes").int64();
      d.smem_per_block_optin = query.column("smem_per_block_optin").int64();
      d.smem_per_sm = query.column("smem_per_sm").int64();
      d.max_threads_per_block = query.column("max_threads_per_block").integer();
      d.regs_per_block = query.column("regs_per_block").integer();
      d.clock_khz = query.column("clock_khz").integer();
      d.driver_version = query.column("driver_version").integer();
      d.nvrtc_version = query.column("nvrtc_version").text();
      out.push_back(std::move(d));
    }
    return out;
  });
}

std::int64_t Store::create_job(const NewJob& job) {
  std::lock_guard lock(mutex_);
  return db::with_context("create_job", [&] {
    db::Statement insert(
        *db_, std::string("INSERT INTO jobs (family, shape_json, shape_key, dtype, mode, arch,"
                          " device_uuid, device_name, budget, pipeline, pinned_configs_json,"
                          " search, search_seconds, search_patience, driver_version,"
                          " nvrtc_version, family_hash, warm_start_json, status, created_at)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                          " 'queued', ") +
                  db::now_sql(db_->dialect()) + ") RETURNING id");
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
    insert.step();           // finish the statement so the write completes before returning
    mutex_.touches_job(id);  // a new job is on no front yet
    return id;
  });
}

std::optional<JobRecord> Store::job(std::int64_t id) {
  const auto reader = readers_->acquire();
  return db::with_context("job " + std::to_string(id), [&] { return db::load_job(*reader, id); });
}

std::vector<JobRecord> Store::jobs(const JobFilter& filter) {
  const auto reader = readers_->acquire();
  return db::with_context("jobs", [&] {
    // CAST: an unbound parameter is a NULL whose type PostgreSQL could not determine.
    db::Statement query(*reader, std::string(db::kJobSelect) +
                                     " WHERE (?1 = '' OR family = ?1)"
                                     " AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)"
                                     " ORDER BY id DESC LIMIT ?3 OFFSET ?4");
    query.bind(1, filter.family);
    if (filter.status) query.bind(2, std::string(to_string(*filter.status)));
    // A negative limit means none (PostgreSQL refuses a negative LIMIT).
    query.bind(3, filter.limit < 0 ? std::numeric_limits<std::int64_t>::max()
                                   : static_cast<std::int64_t>(filter.limit));
    query.bind(4, filter.offset < 0 ? 0 : filter.offset);
    std::vector<JobRecord> out;
    while (query.step()) out.push_back(db::read_job(query));
    return out;
  });
}

JobPage Store::job_page(const JobFilter& filter, std::int64_t before_id) {
  if (filter.limit < 1) throw std::invalid_argument("a job page needs a limit of at least 1");
  const auto reader = readers_->acquire();
  return db::with_context("a page of jobs", [&] {
    // Keyset on the primary key (id < cursor), newest first; the deprecated offset still skips
    // rows after the cursor. One row past the limit says whether another page follows.
    db::Statement query(*reader, std::string(db::kJobSelect) +
                                     " WHERE (?1 = '' OR family = ?1)"
                                     " AND (CAST(?2 AS TEXT) IS NULL OR status = ?2)"
                                     " AND id < ?5"
                                     " ORDER BY id DESC LIMIT ?3 OFFSET ?4");
    query.bind(1, filter.family);
    if (filter.status) query.bind(2, std::string(to_string(*filter.status)));
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

std::vector<std::int64_t> Store::unfinished_jobs() {
  const auto reader = readers_->acquire();
  return db::with_context("unfinished_jobs", [&] {
    db::Statement query(*reader,
                        "SELECT id FROM jobs WHERE status IN ('queued','running') ORDER BY id");
    std::vector<std::int64_t> out;
    while (query.step()) out.push_back(query.column(0).int64());
    return out;
  });
}

void Store::set_job_status(std::int64_t id, JobStatus status, const std::string& reason) {
  std::lock_guard lock(mutex_);
  db::with_context("set_job_status " + std::to_string(id), [&] {
    touches_job(id);
    db::Transaction transaction(*db_, db::TransactionKind::write);
    write_job_status(*db_, id, status, reason);
    transaction.commit();
  });
}

void Store::set_job_reference(std::int64_t id, double reference_us) {
  std::lock_guard lock(mutex_);
  db::with_context("set_job_reference " + std::to_string(id), [&] {
    touches_job(id);
    db::Statement update(*db_, "UPDATE jobs SET reference_us = ? WHERE id = ?");
    update.bind(1, reference_us);
    update.bind(2, id);
    update.exec();
  });
}

bool Store::request_cancel(std::int64_t id) {
  std::lock_guard lock(mutex_);
  return db::with_context("request_cancel " + std::to_string(id), [&] {
    touches_job(id);
    db::Transaction transaction(*db_, db::TransactionKind::write);
    const auto job = db::load_job(*db_, id);
    if (!job || (job->status != JobStatus::queued && job->status != JobStatus::running))
      return false;
    db::Statement flag(*db_, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?");
    flag.bind(1, id);
    flag.exec();
    // Nothing runs a queued job yet, so nobody else would ever finish it.
    if (job->status == JobStatus::queued)
      write_job_status(*db_, id, JobStatus::cancelled, "cancelled before it started");
    transaction.commit();
    return true;
  });
}

}  // namespace kt
