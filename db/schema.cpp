#include "db/schema.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "db/dialect.hpp"

namespace kt::db {
namespace {

struct Migration {
  int version;
  const char* sql;  // SQLite's text; db::schema_sql translates its types for PostgreSQL
  // A step PostgreSQL cannot run as translated gets its own text (in SQLite's type names).
  const char* postgresql_sql = nullptr;
};

// Append new steps at the end; never edit a released one (databases in the field already ran it).
const std::vector<Migration>& migrations() {
  static const std::vector<Migration> steps{
      {1, R"sql(
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  ordinal INTEGER NOT NULL DEFAULT 0,
  arch TEXT NOT NULL,
  sm_major INTEGER NOT NULL,
  sm_minor INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  smem_per_block_optin INTEGER NOT NULL,
  smem_per_sm INTEGER NOT NULL,
  max_threads_per_block INTEGER NOT NULL,
  regs_per_block INTEGER NOT NULL,
  clock_khz INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_version TEXT NOT NULL,
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL
);

-- AUTOINCREMENT: a job id handed to a client is never reused.
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  family TEXT NOT NULL,
  shape_json TEXT NOT NULL,
  shape_key TEXT NOT NULL,
  dtype TEXT NOT NULL,
  mode TEXT NOT NULL,
  arch TEXT NOT NULL,
  device_uuid TEXT NOT NULL DEFAULT '',
  device_name TEXT NOT NULL DEFAULT '',
  budget INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  reference_us REAL,
  created_at TEXT NOT NULL,
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_by_status ON jobs(status, id);
CREATE INDEX jobs_by_family ON jobs(family, id);

CREATE TABLE variants (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  template_name TEXT NOT NULL,
  config_json TEXT NOT NULL,
  config_key TEXT NOT NULL,
  status TEXT NOT NULL,
  failed_gate TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  compile_log TEXT NOT NULL DEFAULT '',
  kernel_key TEXT NOT NULL DEFAULT '',
  registers INTEGER NOT NULL DEFAULT -1,
  spill_bytes INTEGER NOT NULL DEFAULT -1,
  smem_bytes INTEGER NOT NULL DEFAULT -1,
  threads INTEGER NOT NULL DEFAULT 0,
  compile_ms REAL NOT NULL DEFAULT 0,
  UNIQUE (job_id, template_name, config_key)
);
CREATE INDEX variants_by_job_status ON variants(job_id, status);

-- Timing columns are NULL when the variant was not timed, error columns when it was not checked.
CREATE TABLE measurements (
  variant_id INTEGER PRIMARY KEY REFERENCES variants(id) ON DELETE CASCADE,
  median_us REAL,
  min_us REAL,
  p10_us REAL,
  p90_us REAL,
  mean_us REAL,
  rel_noise REAL,
  trials INTEGER,
  converged INTEGER,
  max_abs REAL,
  max_rel REAL,
  rel_l2 REAL,
  first_bad_index INTEGER,
  non_finite INTEGER,
  tflops REAL NOT NULL DEFAULT 0,
  gbps REAL NOT NULL DEFAULT 0,
  speedup REAL
);

CREATE TABLE kernels (
  key TEXT PRIMARY KEY,
  arch TEXT NOT NULL,
  kernel TEXT NOT NULL,
  nvrtc_version TEXT NOT NULL,
  cubin BLOB NOT NULL,
  log TEXT NOT NULL DEFAULT '',
  registers INTEGER NOT NULL DEFAULT 0,
  spill_store_bytes INTEGER NOT NULL DEFAULT 0,
  spill_load_bytes INTEGER NOT NULL DEFAULT 0,
  stack_frame_bytes INTEGER NOT NULL DEFAULT 0,
  static_smem_bytes INTEGER NOT NULL DEFAULT 0,
  const_bytes INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);

CREATE TABLE pareto (
  device_name TEXT NOT NULL,
  family TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape_key TEXT NOT NULL,
  variant_id INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
  median_us REAL NOT NULL,
  max_error REAL NOT NULL,
  footprint REAL NOT NULL,
  PRIMARY KEY (device_name, family, dtype, shape_key, variant_id)
);
-- best/pareto for any device, and removing one variant's point.
CREATE INDEX pareto_by_problem ON pareto(family, dtype, shape_key, median_us);
CREATE INDEX pareto_by_variant ON pareto(variant_id);
)sql"},
      // Measurement trust (issue 3): how each variant was timed, what was thrown away, which GPU,
      // how the job's winner compared with its runner-up, and the engine's own figures.
      {2, R"sql(
ALTER TABLE measurements ADD COLUMN timing_method TEXT NOT NULL DEFAULT 'events';
ALTER TABLE measurements ADD COLUMN launches_per_sample INTEGER NOT NULL DEFAULT 1;
ALTER TABLE measurements ADD COLUMN discarded_samples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measurements ADD COLUMN sm_clock_mhz INTEGER;
ALTER TABLE measurements ADD COLUMN throttle_reasons INTEGER;
ALTER TABLE variants ADD COLUMN gpu_ordinal INTEGER;
ALTER TABLE variants ADD COLUMN measure_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN pipeline TEXT NOT NULL DEFAULT 'pipelined';
ALTER TABLE jobs ADD COLUMN pinned_configs_json TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN gpus INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN wall_seconds REAL;
ALTER TABLE jobs ADD COLUMN gpu_busy_seconds REAL;
ALTER TABLE jobs ADD COLUMN winner_variant_id INTEGER;
ALTER TABLE jobs ADD COLUMN runner_up_variant_id INTEGER;
ALTER TABLE jobs ADD COLUMN winner_distinguishable INTEGER;
ALTER TABLE jobs ADD COLUMN winner_margin REAL;
)sql"},
      // The baseline as timed on each GPU of the job ({"<ordinal>": {...}}), and the final
      // comparison of the top candidates with it (an InterleavedResult).
      {3, R"sql(
ALTER TABLE jobs ADD COLUMN baselines_json TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN final_comparison_json TEXT NOT NULL DEFAULT '';
-- Per-element validation: how many elements failed, the first one's values, what "correct"
-- meant (the tolerance, as JSON) and any damage to the guard regions around the outputs.
ALTER TABLE measurements ADD COLUMN bad_elements INTEGER NOT NULL DEFAULT -1;
ALTER TABLE measurements ADD COLUMN first_bad_output REAL;
ALTER TABLE measurements ADD COLUMN first_bad_reference REAL;
ALTER TABLE measurements ADD COLUMN tolerance_json TEXT NOT NULL DEFAULT '';
ALTER TABLE measurements ADD COLUMN guard_damage TEXT NOT NULL DEFAULT '';
)sql"},
      // Bounded store and cheap progress (issue 11): pruned configurations become counts per
      // (template, reason) with a few examples instead of one variant row each (tens of
      // thousands per job); counts by status are kept per job by triggers; the job's fastest
      // measured variant is kept on its row.
      {4, R"sql(
CREATE TABLE pruned_configs (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  template_name TEXT NOT NULL,
  reason TEXT NOT NULL,
  count INTEGER NOT NULL,
  examples_json TEXT NOT NULL,
  PRIMARY KEY (job_id, template_name, reason)
) WITHOUT ROWID;
INSERT INTO pruned_configs (job_id, template_name, reason, count, examples_json)
  SELECT job_id, template_name, reason, COUNT(*),
         json_group_array(json(config_json)) FILTER (WHERE nth <= 3)
  FROM (SELECT job_id, template_name, reason, config_json,
               ROW_NUMBER() OVER (PARTITION BY job_id, template_name, reason ORDER BY id) AS nth
        FROM variants WHERE status = 'pruned')
  GROUP BY job_id, template_name, reason;
DELETE FROM variants WHERE status = 'pruned';

CREATE TABLE job_counts (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (job_id, status)
) WITHOUT ROWID;
INSERT INTO job_counts (job_id, status, count)
  SELECT job_id, status, COUNT(*) FROM variants GROUP BY job_id, status;
CREATE TRIGGER variants_counted_on_insert AFTER INSERT ON variants BEGIN
  INSERT INTO job_counts (job_id, status, count) VALUES (NEW.job_id, NEW.status, 1)
    ON CONFLICT (job_id, status) DO UPDATE SET count = count + 1;
END;
CREATE TRIGGER variants_counted_on_update AFTER UPDATE OF status ON variants
  WHEN OLD.status <> NEW.status BEGIN
  UPDATE job_counts SET count = count - 1 WHERE job_id = OLD.job_id AND status = OLD.status;
  INSERT INTO job_counts (job_id, status, count) VALUES (NEW.job_id, NEW.status, 1)
    ON CONFLICT (job_id, status) DO UPDATE SET count = count + 1;
END;
CREATE TRIGGER variants_counted_on_delete AFTER DELETE ON variants BEGIN
  UPDATE job_counts SET count = count - 1 WHERE job_id = OLD.job_id AND status = OLD.status;
END;

ALTER TABLE jobs ADD COLUMN best_variant_id INTEGER;
UPDATE jobs SET best_variant_id = (
  SELECT v.id FROM variants v JOIN measurements m ON m.variant_id = v.id
  WHERE v.job_id = jobs.id AND v.status = 'measured' AND m.median_us IS NOT NULL
  ORDER BY m.median_us, v.id LIMIT 1);
)sql",
       // PostgreSQL stores start at a release that already has this step, so their tables are
       // empty here: no rows to convert. Its triggers call functions.
       R"sql(
CREATE TABLE pruned_configs (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  template_name TEXT NOT NULL,
  reason TEXT NOT NULL,
  count INTEGER NOT NULL,
  examples_json TEXT NOT NULL,
  PRIMARY KEY (job_id, template_name, reason)
);
CREATE TABLE job_counts (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (job_id, status)
);
-- Statement-level: one count update per statement and status. A row-level trigger would update
-- the same job_counts row once per variant, and inside one transaction each update walks the
-- chain of that row's earlier versions: quadratic in the size of a plan or a cancel.
CREATE FUNCTION kt_count_inserted_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO job_counts (job_id, status, count)
    SELECT job_id, status, COUNT(*) FROM inserted GROUP BY job_id, status
    ON CONFLICT (job_id, status) DO UPDATE SET count = job_counts.count + excluded.count;
  RETURN NULL;
END $$;
CREATE FUNCTION kt_count_updated_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE job_counts SET count = job_counts.count - moved.n
    FROM (SELECT o.job_id, o.status, COUNT(*) AS n FROM before_rows o
          JOIN after_rows n ON n.id = o.id WHERE o.status <> n.status
          GROUP BY o.job_id, o.status) AS moved
    WHERE job_counts.job_id = moved.job_id AND job_counts.status = moved.status;
  INSERT INTO job_counts (job_id, status, count)
    SELECT n.job_id, n.status, COUNT(*) FROM before_rows o JOIN after_rows n ON n.id = o.id
    WHERE o.status <> n.status GROUP BY n.job_id, n.status
    ON CONFLICT (job_id, status) DO UPDATE SET count = job_counts.count + excluded.count;
  RETURN NULL;
END $$;
CREATE FUNCTION kt_count_deleted_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE job_counts SET count = job_counts.count - gone.n
    FROM (SELECT job_id, status, COUNT(*) AS n FROM deleted GROUP BY job_id, status) AS gone
    WHERE job_counts.job_id = gone.job_id AND job_counts.status = gone.status;
  RETURN NULL;
END $$;
CREATE TRIGGER variants_counted_on_insert AFTER INSERT ON variants
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION kt_count_inserted_variants();
CREATE TRIGGER variants_counted_on_update AFTER UPDATE ON variants
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION kt_count_updated_variants();
CREATE TRIGGER variants_counted_on_delete AFTER DELETE ON variants
  REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION kt_count_deleted_variants();
ALTER TABLE jobs ADD COLUMN best_variant_id INTEGER;
)sql"},
      // Search (issue 15): the searcher a job runs and its stop conditions; the best-so-far after
      // every measured variant, in the order they were measured, for convergence plots.
      {5, R"sql(
ALTER TABLE jobs ADD COLUMN search TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN search_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN search_patience INTEGER NOT NULL DEFAULT 0;
CREATE TABLE job_convergence (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  measured INTEGER NOT NULL,
  variant_id INTEGER NOT NULL,
  median_us REAL NOT NULL,
  best_us REAL NOT NULL,
  PRIMARY KEY (job_id, measured)
) WITHOUT ROWID;
)sql"},
      // Knowledge across shapes (issue 15): what a result was tuned with, so a change of driver,
      // NVRTC or the family's sources marks it stale; and the warm start a job's search had.
      {6, R"sql(
ALTER TABLE jobs ADD COLUMN driver_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN nvrtc_version TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN family_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN warm_start_json TEXT NOT NULL DEFAULT '';
)sql"},
      // Families over the API (issue 16): every version a client registered, its manifest and
      // sources as sent (the daemon writes them out again at start), the newest per name served.
      {7, R"sql(
CREATE TABLE registered_families (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  manifest_json TEXT NOT NULL,
  sources_json TEXT NOT NULL,
  compile_json TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  UNIQUE (name, source_hash)
);
)sql"},
      // A fleet (issue 17): daemons sharing one database register themselves, and a job's planned
      // variants are claimed with leases (owner, expiry in ms since the epoch, database time), so
      // two daemons never run the same variant; a lease that expires counts on the variant.
      {8, R"sql(
CREATE TABLE daemons (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  gpus_json TEXT NOT NULL DEFAULT '[]',
  lease_ms INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_ms INTEGER NOT NULL,
  stopped INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE variants ADD COLUMN lease_owner INTEGER;
ALTER TABLE variants ADD COLUMN lease_expires_ms INTEGER;
ALTER TABLE variants ADD COLUMN lease_expiries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE variants ADD COLUMN lease_history TEXT NOT NULL DEFAULT '';
CREATE INDEX variants_by_lease ON variants(lease_owner, lease_expires_ms)
  WHERE lease_owner IS NOT NULL;
)sql"},
      // Families over the API, durable registrations (issue 16): a registration from the upload to
      // its outcome, so that a poll after a restart gets the real answer. While compiling it keeps
      // the upload (a restarted daemon compiles it again) and the daemon compiling it (another
      // daemon of a fleet takes it up only once that one is gone); finished, only the outcome.
      {9, R"sql(
CREATE TABLE family_registrations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  family TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  previous_hash TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  message TEXT NOT NULL DEFAULT '',
  compile_json TEXT NOT NULL DEFAULT '',
  manifest_json TEXT NOT NULL DEFAULT '',
  sources_json TEXT NOT NULL DEFAULT '',
  daemon_id INTEGER,
  created_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX family_registrations_by_status ON family_registrations(status, seq);
)sql"},
      // A fleet's faults count begun work only (issue 17): when the lease holder began the
      // variant's work (its compile, database clock in ms), NULL while its lease holder has not
      // begun it. An expired lease counts toward the fault rule only with work begun; a batch
      // that a daemon claimed and died holding, unstarted, just goes back to planned.
      {10, R"sql(
ALTER TABLE variants ADD COLUMN work_began_ms INTEGER;
)sql"},
      // The fault rule asks for two daemons (issue 17): the ids of the daemons whose leases of the
      // variant expired with its work begun, space-separated, in order ("3 7 7").
      {11, R"sql(
ALTER TABLE variants ADD COLUMN lease_expiry_owners TEXT NOT NULL DEFAULT '';
)sql"},
      // Batches (POST /v1/batches): many problems tuned as one request, largest time share first.
      // Each problem keeps its plan (submitted, joined an unfinished job, tuned before, refused),
      // the job that tunes or tuned it and why; the jobs' own rows say how far they are.
      {12, R"sql(
CREATE TABLE batches (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  label TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  device_model TEXT NOT NULL DEFAULT '',
  budget_per_shape INTEGER NOT NULL DEFAULT 0,
  search TEXT NOT NULL DEFAULT '',
  retune INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE batch_problems (
  batch_id INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  family TEXT NOT NULL,
  shape_json TEXT NOT NULL,
  dtype TEXT NOT NULL,
  share REAL NOT NULL DEFAULT 0,
  calls INTEGER NOT NULL DEFAULT 0,
  plan TEXT NOT NULL,
  job_id INTEGER,
  note TEXT NOT NULL DEFAULT '',
  error_code TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (batch_id, position)
);
CREATE INDEX batch_problems_by_job ON batch_problems(job_id) WHERE job_id IS NOT NULL;
)sql"},
      // A batch's deadline held by the daemon (ms since the epoch, the database's clock): its own
      // unfinished jobs are cancelled once it passes, whether or not a client is still watching.
      {13, R"sql(
ALTER TABLE batches ADD COLUMN minutes REAL;
ALTER TABLE batches ADD COLUMN deadline_ms INTEGER;
)sql"},
  };
  return steps;
}

const char* const kCreateVersionTable =
    "CREATE TABLE IF NOT EXISTS kerntune_schema (version BIGINT NOT NULL)";

void write_schema_version(Connection& db, int version) {
  if (db.dialect() == Dialect::sqlite) {
    db.execute_script("PRAGMA user_version = " + std::to_string(version));
    return;
  }
  db.execute_script("DELETE FROM kerntune_schema; INSERT INTO kerntune_schema VALUES (" +
                    std::to_string(version) + ")");
}

}  // namespace

int latest_schema_version() {
  return migrations().back().version;
}

int read_schema_version(Connection& db) {
  if (db.dialect() == Dialect::sqlite) {
    Statement version(db, "PRAGMA user_version");
    return version.step() ? version.column(0).integer() : 0;
  }
  Statement exists(db, "SELECT to_regclass('kerntune_schema') IS NOT NULL");
  if (!exists.step() || exists.column(0).text() != "t") return 0;
  Statement version(db, "SELECT COALESCE(MAX(version), 0) FROM kerntune_schema");
  return version.step() ? version.column(0).integer() : 0;
}

void require_known_version(Connection& db) {
  const int version = read_schema_version(db);
  const int latest = latest_schema_version();
  if (version > latest)
    throw std::runtime_error("database schema version " + std::to_string(version) +
                             " is newer than this kerntune supports (" + std::to_string(latest) +
                             "); upgrade kerntune or use another database");
}

void migrate(Connection& db) {
  require_known_version(db);
  for (const Migration& step : migrations()) {
    if (read_schema_version(db) >= step.version) continue;
    // The write lock first, so two processes opening a fresh database at once do not both run
    // the step: the second re-reads the version inside the lock and skips it.
    Transaction transaction(db, TransactionKind::write);
    if (db.dialect() == Dialect::postgresql) db.execute_script(kCreateVersionTable);
    const int current = read_schema_version(db);
    if (current >= step.version) continue;
    if (current != step.version - 1)
      throw std::runtime_error("schema version " + std::to_string(current) +
                               " cannot be migrated to " + std::to_string(step.version));
    const bool own_text = db.dialect() == Dialect::postgresql && step.postgresql_sql != nullptr;
    db.execute_script(schema_sql(own_text ? step.postgresql_sql : step.sql, db.dialect()));
    write_schema_version(db, step.version);
    transaction.commit();
  }
}

}  // namespace kt::db
