// kt::Store: opening the database, then forwarding each call to the part that owns its SQL.
#include "db/store.hpp"

#include <stdexcept>

#include "db/convergence_store.hpp"
#include "db/device_store.hpp"
#include "db/engine_store.hpp"
#include "db/kernel_store.hpp"
#include "db/pareto_store.hpp"
#include "db/read_pool.hpp"
#include "db/registered_family_store.hpp"
#include "db/rows.hpp"
#include "db/schema.hpp"
#include "db/store_writer.hpp"
#include "db/winner_store.hpp"

namespace kt {

Store::Store(const std::filesystem::path& path, int read_connections) {
  const std::string location = path.string();
  try {
    health_ = std::make_shared<db::StoreHealth>(db::is_postgresql_uri(location) ? "postgresql"
                                                                                : "sqlite");
    auto db = db::open_connection(location, db::Access::write, health_);
    db::migrate(*db);
    writer_ = std::make_unique<db::StoreWriter>(std::move(db));
    // After the migration: a reader must never see a half-made schema.
    readers_ = std::make_unique<db::ReadPool>(location, read_connections, health_);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot open kerntune database " + db::redacted_location(location) +
                             ": " + e.what());
  }
  db::StoreWriter& writer = *writer_;
  db::ReadPool& readers = *readers_;
  leases_ = std::make_unique<db::LeaseStore>(writer, readers);
  devices_ = std::make_unique<db::DeviceStore>(writer, readers);
  jobs_ = std::make_unique<db::JobStore>(writer, readers);
  variants_ = std::make_unique<db::VariantStore>(writer, readers, *leases_);
  winners_ = std::make_unique<db::WinnerStore>(writer);
  engine_ = std::make_unique<db::EngineStore>(writer, readers, *leases_);
  kernels_ = std::make_unique<db::KernelStore>(writer, readers);
  fronts_ = std::make_unique<db::ParetoStore>(writer, readers);
  convergence_ = std::make_unique<db::ConvergenceStore>(readers);
  families_ = std::make_unique<db::RegisteredFamilyStore>(writer, readers);
  registrations_ = std::make_unique<db::FamilyRegistrationStore>(writer, readers, *leases_);
  batches_ = std::make_unique<db::BatchStore>(writer, readers);
}

Store::~Store() = default;

int Store::schema_version() {
  const auto reader = readers_->acquire();
  return db::with_context("schema_version", [&] { return db::read_schema_version(*reader); });
}

void Store::observe_statements(db::StatementObserver observer) {
  writer_->observe(observer);
  readers_->observe(std::move(observer));
}

bool Store::shared() const {
  return writer_->shared();
}
std::uint64_t Store::write_count() const {
  return writer_->write_count();
}
std::uint64_t Store::job_write_stamp(std::int64_t job_id) const {
  return writer_->job_stamp(job_id);
}
std::uint64_t Store::fronts_write_stamp() const {
  return writer_->fronts_stamp();
}
void Store::note_outside_change() {
  writer_->note_outside_change();
}

// Devices and jobs.
std::int64_t Store::upsert_device(const DeviceInfo& device) {
  return devices_->upsert_device(device);
}
std::vector<DeviceInfo> Store::devices() {
  return devices_->devices();
}
std::int64_t Store::create_job(const NewJob& job) {
  return jobs_->create_job(job);
}
std::optional<JobRecord> Store::job(std::int64_t id) {
  return jobs_->job(id);
}
std::vector<JobRecord> Store::jobs(const JobFilter& filter) {
  return jobs_->jobs(filter);
}
JobPage Store::job_page(const JobFilter& filter, std::int64_t before_id) {
  return jobs_->job_page(filter, before_id);
}
std::vector<std::int64_t> Store::unfinished_jobs() {
  return jobs_->unfinished_jobs();
}
std::int64_t Store::set_job_status(std::int64_t id, JobStatus status, const std::string& reason) {
  return jobs_->set_job_status(id, status, reason);
}
void Store::set_job_reference(std::int64_t id, double reference_us) {
  jobs_->set_job_reference(id, reference_us);
}
bool Store::request_cancel(std::int64_t id) {
  return jobs_->request_cancel(id);
}

// The job's result.
void Store::record_job_baseline(std::int64_t id, int gpu_ordinal, const BaselineTiming& baseline) {
  winners_->record_job_baseline(id, gpu_ordinal, baseline);
}
void Store::record_job_baseline_failure(std::int64_t id, int gpu_ordinal, const std::string& reason,
                                        const nlohmann::json& baseline) {
  winners_->record_job_baseline_failure(id, gpu_ordinal, reason, baseline);
}
void Store::record_winner_comparison(std::int64_t job_id, const InterleavedResult& comparison) {
  winners_->record_winner_comparison(job_id, comparison);
}

// Variants.
std::vector<VariantRecord> Store::plan_variants(std::int64_t job_id,
                                                const std::vector<VariantRecord>& planned,
                                                const std::vector<PrunedGroup>& pruned) {
  return variants_->plan_variants(job_id, planned, pruned);
}
std::vector<PrunedGroup> Store::pruned_groups(std::int64_t job_id) {
  return variants_->pruned_groups(job_id);
}
std::vector<VariantRecord> Store::variants(std::int64_t job_id, bool gated_only) {
  return variants_->variants(job_id, gated_only);
}
VariantPage Store::variant_page(std::int64_t job_id, const VariantPageQuery& query) {
  return variants_->variant_page(job_id, query);
}
std::optional<VariantRecord> Store::fastest_variant(std::int64_t job_id) {
  return variants_->fastest_variant(job_id);
}
std::optional<VariantRecord> Store::variant(std::int64_t id) {
  return variants_->variant(id);
}
void Store::record_compile(std::int64_t variant_id, const CompileResult& result, int threads,
                           int dynamic_smem_bytes) {
  variants_->record_compile(variant_id, result, threads, dynamic_smem_bytes);
}
void Store::record_loaded_resources(std::int64_t variant_id, int registers, int smem_bytes) {
  variants_->record_loaded_resources(variant_id, registers, smem_bytes);
}
void Store::record_outcome(std::int64_t variant_id, const VariantOutcome& outcome) {
  variants_->record_outcome(variant_id, outcome);
}
JobProgress Store::progress(std::int64_t job_id) {
  return variants_->progress(job_id);
}
std::vector<ConvergencePoint> Store::convergence(std::int64_t job_id) {
  return convergence_->convergence(job_id);
}

// The engine's bookkeeping.
void Store::set_job_gpus(std::int64_t job_id, int gpus) {
  engine_->set_job_gpus(job_id, gpus);
}
void Store::set_job_timing(std::int64_t job_id, std::optional<double> wall_seconds,
                           std::optional<double> gpu_busy_seconds) {
  engine_->set_job_timing(job_id, wall_seconds, gpu_busy_seconds);
}
void Store::record_worker_time(std::int64_t variant_id, int gpu_ordinal, double measure_ms) {
  engine_->record_worker_time(variant_id, gpu_ordinal, measure_ms);
}
std::vector<double> Store::compile_times_ms(std::int64_t job_id) {
  return engine_->compile_times_ms(job_id);
}

// The fleet.
std::int64_t Store::register_daemon(const std::string& host, int pid, const std::string& gpus_json,
                                    std::int64_t lease_ms) {
  return leases_->register_daemon(host, pid, gpus_json, lease_ms);
}
std::optional<std::int64_t> Store::daemon_id() const {
  return leases_->daemon_id();
}
std::vector<DaemonRecord> Store::daemons() {
  return leases_->daemons();
}
void Store::heartbeat() {
  leases_->heartbeat();
}
LeaseExpiry Store::expire_leases() {
  return leases_->expire_leases();
}
void Store::begin_variant_work(std::int64_t variant_id) {
  leases_->begin_variant_work(variant_id);
}
std::vector<VariantRecord> Store::claim_variants(std::int64_t job_id, int limit) {
  return leases_->claim_variants(job_id, limit);
}
bool Store::claim_variant(std::int64_t variant_id) {
  return leases_->claim_variant(variant_id);
}
std::int64_t Store::leased_elsewhere(std::int64_t job_id) {
  return leases_->leased_elsewhere(job_id);
}
void Store::release_leases() {
  leases_->release_leases();
}

// Compile cache.
std::optional<KernelBlob> Store::find_kernel(const std::string& key) {
  return kernels_->find_kernel(key);
}
void Store::put_kernel(const KernelBlob& blob) {
  kernels_->put_kernel(blob);
}

// Fronts and best.
std::vector<VariantRecord> Store::pareto(const std::string& family, const std::string& dtype,
                                         const std::string& shape_key,
                                         const std::string& device_name) {
  return fronts_->pareto(family, dtype, shape_key, device_name);
}
std::vector<TunedProblem> Store::tuned_problems(const std::string& family,
                                                const std::string& device_name, int limit) {
  return fronts_->tuned_problems(family, device_name, limit);
}
std::vector<std::string> Store::tuned_shape_keys(const std::string& family,
                                                 const std::string& dtype,
                                                 const std::string& device_name, int limit) {
  return fronts_->tuned_shape_keys(family, dtype, device_name, limit);
}
std::vector<VariantRecord> Store::fastest_variants(std::int64_t job_id, int limit) {
  return fronts_->fastest_variants(job_id, limit);
}
std::optional<BestEntry> Store::best(const std::string& family, const std::string& dtype,
                                     const std::string& shape_key, const std::string& device_name) {
  return fronts_->best(family, dtype, shape_key, device_name);
}
std::optional<JobRecord> Store::newest_baseline_job(const std::string& family,
                                                    const std::string& dtype,
                                                    const std::string& shape_key,
                                                    const std::string& device_name) {
  return fronts_->newest_baseline_job(family, dtype, shape_key, device_name);
}

// Registered families and their registrations.
std::int64_t Store::save_registered_family(const RegisteredFamilyRecord& family) {
  return families_->save_registered_family(family);
}
std::vector<RegisteredFamilyRecord> Store::registered_families() {
  return families_->registered_families();
}
void Store::create_family_registration(const FamilyRegistrationRecord& registration) {
  registrations_->create_family_registration(registration);
}
std::optional<FamilyRegistrationRecord> Store::family_registration(const std::string& id) {
  return registrations_->family_registration(id);
}
std::vector<FamilyRegistrationRecord> Store::claim_family_registrations() {
  return registrations_->claim_family_registrations();
}
void Store::finish_family_registration(const FamilyRegistrationRecord& outcome) {
  registrations_->finish_family_registration(outcome);
}

// Batches.
std::int64_t Store::create_batch(const NewBatch& batch) {
  return batches_->create_batch(batch);
}
std::optional<BatchRecord> Store::batch(std::int64_t id) {
  return batches_->batch(id);
}
BatchPage Store::batch_page(int limit, std::int64_t before_id) {
  return batches_->batch_page(limit, before_id);
}
bool Store::request_batch_cancel(std::int64_t id) {
  return batches_->request_batch_cancel(id);
}
std::vector<BatchRecord> Store::batches_past_deadline() {
  return batches_->batches_past_deadline();
}

}  // namespace kt
