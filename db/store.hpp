// kerntune's store: devices, jobs, variants with their gate outcomes, measurements, compiled
// kernels (the compile cache) and the Pareto front per (device model, family, shape, dtype), in
// an SQLite file (WAL; the default) or a PostgreSQL database (db/connection.hpp). Every write is a
// transaction, so a killed daemon loses nothing it reported as stored. Thread-safe: writes go
// through one connection behind a mutex; reads through a pool of read-only connections, so a
// slow write never holds up a query and queries run in parallel.
//
// Store is a facade: each aggregate's SQL lives in its own part (db/job_store.hpp,
// db/variant_store.hpp, db/lease_store.hpp, db/pareto_store.hpp, ...), which all share the one
// writer (db/store_writer.hpp) and the read pool; Store opens the database and forwards.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/batch_store.hpp"
#include "db/connection.hpp"
#include "db/family_registration_store.hpp"
#include "db/job_store.hpp"
#include "db/lease_store.hpp"
#include "db/model.hpp"
#include "db/store_health.hpp"
#include "db/variant_store.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/interleaved_protocol.hpp"

namespace kt {

inline constexpr int kDefaultReadConnections = 4;

namespace db {
class BatchStore;
class ConvergenceStore;
class DeviceStore;
class EngineStore;
class KernelStore;
class ParetoStore;
class ReadPool;
class RegisteredFamilyStore;
class StoreWriter;
class WinnerStore;
}  // namespace db

class Store {
 public:
  // Opens the database: a path is an SQLite file (created if needed, WAL and foreign keys on); a
  // postgresql:// or postgres:// URI (libpq's syntax) is a PostgreSQL database, which must exist.
  // Applies migrations up to the current schema version, then opens read_connections read-only
  // connections. Throws std::runtime_error with the path (a URI without its password) on failure.
  explicit Store(const std::filesystem::path& path, int read_connections = kDefaultReadConnections);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version();

  // Whether the store's last attempt found the database working (PostgreSQL answering, an SQLite
  // file taking writes), read from memory: no query, never waits.
  db::StoreHealthSnapshot health() const { return health_->snapshot(); }
  // An operation that loses the database (or its writes) retries with backoff until it works; after
  // give_up_waiting it throws StoreUnavailable instead (a stopping daemon), until wait_again.
  void give_up_waiting() { health_->give_up_waiting(); }
  void wait_again() { health_->wait_again(); }

  // Devices, keyed by UUID (required: std::invalid_argument if empty); returns the row id.
  std::int64_t upsert_device(const DeviceInfo& device);
  std::vector<DeviceInfo> devices();

  // Jobs.
  std::int64_t create_job(const NewJob& job);
  std::optional<JobRecord> job(std::int64_t id);
  std::vector<JobRecord> jobs(const JobFilter& filter);  // newest first
  // filter.limit (>= 1) jobs older than before_id (0 = from the newest), after filter.offset
  // skipped ones, with the cursor of the next page; memory bounded by the limit.
  JobPage job_page(const JobFilter& filter, std::int64_t before_id);
  std::vector<std::int64_t> unfinished_jobs();  // queued or running, oldest first
  // Sets status and reason (replacing the old reason). started_at is stamped the first time a
  // job runs, finished_at when it becomes done/failed/cancelled. A job already in a final state
  // keeps it (the call is a no-op), so a cancel is never overwritten by a late "running".
  // Becoming cancelled also marks the job's pending variants cancelled.
  // Returns how many pending variants a cancel closed as cancelled (0 otherwise).
  std::int64_t set_job_status(std::int64_t id, JobStatus status, const std::string& reason = "");
  void set_job_reference(std::int64_t id, double reference_us);
  // The baseline as timed on one GPU of the job (jobs.baselines_json["<ordinal>"]); the first one
  // recorded also becomes the job's reference_us. std::invalid_argument for an unknown job.
  void record_job_baseline(std::int64_t id, int gpu_ordinal, const BaselineTiming& baseline);
  // The baseline could not stand as one on that GPU (model.hpp, JobRecord::baselines): recorded
  // with the reason and what it was, without a median, so no speedup or answer rests on it.
  void record_job_baseline_failure(std::int64_t id, int gpu_ordinal, const std::string& reason,
                                   const nlohmann::json& baseline);
  // Marks cancel_requested; a queued job becomes cancelled at once (its pending variants too).
  // False if unknown or final.
  bool request_cancel(std::int64_t id);

  // Variants: plans are inserted once per (job, template, config); re-inserting is a no-op, so a
  // resumed job keeps its finished variants. Returns all variants of the job in plan order.
  // The pruned groups are stored in the same transaction (replacing the job's earlier counts);
  // their counts appear in progress() as status "pruned".
  std::vector<VariantRecord> plan_variants(std::int64_t job_id,
                                           const std::vector<VariantRecord>& planned,
                                           const std::vector<PrunedGroup>& pruned = {});
  // The job's pruned configurations, by template and reason (largest count first).
  std::vector<PrunedGroup> pruned_groups(std::int64_t job_id);
  // gated_only: leave out pruned and unsupported_arch rows (most of a large space).
  std::vector<VariantRecord> variants(std::int64_t job_id, bool gated_only = false);
  // At most query.limit of the job's variants after query.after_id, in id order: what the API
  // serves, so a page never holds more than limit rows however large the job.
  VariantPage variant_page(std::int64_t job_id, const VariantPageQuery& query);
  // The job's measured variant with the lowest median time, if any (kept on the job row by
  // record_outcome, so reading it costs one lookup).
  std::optional<VariantRecord> fastest_variant(std::int64_t job_id);
  std::optional<VariantRecord> variant(std::int64_t id);
  // Stores the kernel key, log and resources (registers, spills, static + dynamic smem,
  // threads); a failed compile keeps them unknown (-1). The status is record_outcome's to set.
  void record_compile(std::int64_t variant_id, const CompileResult& result, int threads,
                      int dynamic_smem_bytes);
  // Registers and shared memory as the driver reports them for the loaded kernel (the
  // authority when NVRTC's ptxas report was empty); negative values leave the stored ones.
  void record_loaded_resources(std::int64_t variant_id, int registers, int smem_bytes);
  // Stores the outcome; for a measured variant of a tune job, updates the Pareto front of the
  // job's (device model, family, shape, dtype) in the same transaction. Without timing and error
  // any earlier measurement row is removed; a missing speedup is filled in from the job's
  // reference_us when both times are known. Front objectives: median_us, error.max_rel and the
  // footprint smem_bytes + 4 * registers * threads (on-chip bytes per block).
  void record_outcome(std::int64_t variant_id, const VariantOutcome& outcome);
  // Counts by status, kept up to date by the writer (triggers on variants), plus the pruned
  // groups' counts: a lookup, not a count over the variant rows.
  JobProgress progress(std::int64_t job_id);
  // The best-so-far after every measured variant, in measurement order (db/convergence_store.cpp).
  std::vector<ConvergencePoint> convergence(std::int64_t job_id);
  // Stores who won the interleaved re-measure of the job's top candidates and whether the winner
  // is distinguishable from the runner-up (jobs.winner_*), and the whole comparison (with the
  // baseline's timing and the speedups, when it had a baseline) as the job's final result. The
  // compared variants enter the Pareto front with their interleaved medians: the front and
  // /v1/best rank them by the final figures, while their first-pass rows stay as measured.
  // Recording again replaces it. std::invalid_argument for an unknown job or a winner that is
  // not one of its variants.
  void record_winner_comparison(std::int64_t job_id, const InterleavedResult& comparison);

  // The engine's bookkeeping (engine_store.cpp). GPUs the job's variants are spread over:
  void set_job_gpus(std::int64_t job_id, int gpus);
  // The job's wall and GPU-busy seconds so far (replacing the stored values; unset stays NULL).
  void set_job_timing(std::int64_t job_id, std::optional<double> wall_seconds,
                      std::optional<double> gpu_busy_seconds);
  // Which GPU measured the variant and how long its worker took.
  void record_worker_time(std::int64_t variant_id, int gpu_ordinal, double measure_ms);
  // NVRTC milliseconds of each of the job's variants that was compiled (cache hits excluded).
  std::vector<double> compile_times_ms(std::int64_t job_id);

  // The fleet (db/lease_store.cpp). A daemon registers once (host, pid, GPUs, lease length);
  // from then on this store refuses (LeaseLost, nothing written) a variant's compile results and
  // outcome when another daemon holds its lease or it already has its outcome and no lease of
  // this daemon; a planned variant no daemon holds may be written (a tool's direct write).
  // Without a registration no lease is checked. On SQLite (one daemon per file) registering also
  // releases every earlier daemon's leases, which a restart takes over; on PostgreSQL they wait for
  // their expiry.
  std::int64_t register_daemon(const std::string& host, int pid, const std::string& gpus_json,
                               std::int64_t lease_ms = kDefaultLeaseMs);
  std::optional<std::int64_t> daemon_id() const;
  // True for PostgreSQL: other daemons may share the database.
  bool shared() const;
  std::vector<DaemonRecord> daemons();
  // Extends the daemon's heartbeat and every lease it holds by its lease length.
  void heartbeat();
  // Expired leases (any daemon's) go back to planned. An expiry counts on the variant only when
  // its holder had begun its work (begin_variant_work); a variant at its kLeaseExpiriesToFault-th
  // counted expiry, counted on at least kLeaseOwnersToFault different daemons, is recorded
  // crashed with the daemons that died holding it, not planned again.
  // Every expiry, counted or not, is added to the variant's lease history.
  LeaseExpiry expire_leases();
  // The lease holder begins the variant's work (its compile, then its measurement): from now on
  // an expiry of this lease counts toward the fault rule. Throws LeaseLost (nothing written) when
  // another daemon holds the variant or it has its outcome. Without a registration, a no-op.
  void begin_variant_work(std::int64_t variant_id);
  // Claims up to `limit` of the job's planned variants that no daemon holds (after expiring the
  // expired leases), in id order, for the registered daemon (registered on first use if none).
  std::vector<VariantRecord> claim_variants(std::int64_t job_id, int limit);
  // Claims one variant (a searched job's pick); false when another daemon holds it or it has its
  // outcome.
  bool claim_variant(std::int64_t variant_id);
  // How many of the job's planned variants other daemons hold under a lease not yet expired.
  std::int64_t leased_elsewhere(std::int64_t job_id);
  // The daemon stops cleanly: its leases go back to planned without counting as expiries.
  void release_leases();

  // Compile cache.
  std::optional<KernelBlob> find_kernel(const std::string& key);
  void put_kernel(const KernelBlob& blob);

  // Pareto front and best (lowest median time on the front) for a device model ("" = any).
  std::vector<VariantRecord> pareto(const std::string& family, const std::string& dtype,
                                    const std::string& shape_key, const std::string& device_name);
  // Every tuned problem (one per Pareto front) of a family and device model ("" = any), ordered
  // by family, device, dtype and shape; at most limit of them.
  std::vector<TunedProblem> tuned_problems(const std::string& family,
                                           const std::string& device_name, int limit);
  // The shapes (canonical keys) with a Pareto front for a family and dtype on a device model
  // ("" = any), at most limit, read from an index (pareto's primary key, or pareto_by_problem
  // for any model), never from the variants: the candidates of a nearest-shape lookup.
  std::vector<std::string> tuned_shape_keys(const std::string& family, const std::string& dtype,
                                            const std::string& device_name, int limit);
  // The job's measured variants, fastest first median, at most limit (a warm start's seeds).
  std::vector<VariantRecord> fastest_variants(std::int64_t job_id, int limit);
  // Answered from memory while nothing was written since the same question was last asked: the
  // API's hottest read costs a lookup instead of a query.
  std::optional<BestEntry> best(const std::string& family, const std::string& dtype,
                                const std::string& shape_key, const std::string& device_name);
  // The newest finished (done) tune job of the problem that timed the family's baseline, for a
  // problem where no variant of ours was measured: /v1/best then answers with the baseline.
  std::optional<JobRecord> newest_baseline_job(const std::string& family, const std::string& dtype,
                                               const std::string& shape_key,
                                               const std::string& device_name);

  // Families registered over the API (db/registered_family_store.cpp). Saving a version again makes
  // it the newest of its name; returns its id.
  std::int64_t save_registered_family(const RegisteredFamilyRecord& family);
  // The newest version of every registered family, by name.
  std::vector<RegisteredFamilyRecord> registered_families();
  // Family registrations from the upload to the outcome (db/family_registration_store.cpp), so
  // that a poll after a restart gets the real answer. A new one (compiling) with its upload, held
  // by this daemon:
  void create_family_registration(const FamilyRegistrationRecord& registration);
  // The registration without its upload; nullopt for an id the store does not have.
  std::optional<FamilyRegistrationRecord> family_registration(const std::string& id);
  // Takes over, with their uploads, oldest first, the compiling registrations no live daemon holds
  // (stopped, or its heartbeat older than its lease; on SQLite every other daemon), for this
  // daemon (registered on first use if none): what a restart compiles again.
  std::vector<FamilyRegistrationRecord> claim_family_registrations();
  // Records the outcome (status, message, compile_json, both hashes) and drops the upload. Keeps
  // the newest kKeptFamilyRegistrations finished registrations.
  void finish_family_registration(const FamilyRegistrationRecord& outcome);
  // Batches (db/batch_store.cpp): a batch with its problems, written in one transaction; returns
  // its id (never reused). A batch as stored (nullopt: unknown); a page of them, newest first,
  // before before_id (0 = from the newest); marks one's cancel (false: unknown id). The jobs a
  // batch names keep their own state: read them with job().
  std::int64_t create_batch(const NewBatch& batch);
  std::optional<BatchRecord> batch(std::int64_t id);
  BatchPage batch_page(int limit, std::int64_t before_id);
  bool request_batch_cancel(std::int64_t id);
  // The batches whose deadline (NewBatch::minutes) has passed and that are not cancelled yet.
  std::vector<BatchRecord> batches_past_deadline();

  // Counts as a write that may have changed any answer, without writing: for a change answers
  // depend on that is not in the store (the family registry serving a new version).
  void note_outside_change();

  // Changes whenever a write of this store commits: an answer computed from reads that began when
  // it had a value is still the answer while it keeps it.
  // On PostgreSQL every call returns a new value: other daemons' writes are not counted here, so
  // nothing may be kept on the strength of an unchanged count.
  std::uint64_t write_count() const;
  // The same for what one job's rows say (its variants, counts, pages) and for the fronts and
  // /v1/best: they change only with writes that may have changed those, so an answer about a
  // finished job outlives another job's progress.
  std::uint64_t job_write_stamp(std::int64_t job_id) const;
  std::uint64_t fronts_write_stamp() const;

  // Calls observer with every statement any connection runs from now on (empty: stop). For
  // tests that check the API's query plans; call it while the store is idle.
  void observe_statements(db::StatementObserver observer);

 private:
  std::shared_ptr<db::StoreHealth> health_;
  std::unique_ptr<db::StoreWriter> writer_;
  std::unique_ptr<db::ReadPool> readers_;
  // The parts, over writer_ and readers_ (declared after them: destroyed first).
  std::unique_ptr<db::LeaseStore> leases_;
  std::unique_ptr<db::DeviceStore> devices_;
  std::unique_ptr<db::JobStore> jobs_;
  std::unique_ptr<db::VariantStore> variants_;
  std::unique_ptr<db::WinnerStore> winners_;
  std::unique_ptr<db::EngineStore> engine_;
  std::unique_ptr<db::KernelStore> kernels_;
  std::unique_ptr<db::ParetoStore> fronts_;
  std::unique_ptr<db::ConvergenceStore> convergence_;
  std::unique_ptr<db::RegisteredFamilyStore> families_;
  std::unique_ptr<db::FamilyRegistrationStore> registrations_;
  std::unique_ptr<db::BatchStore> batches_;
};

}  // namespace kt
