// kerntune's SQLite store (WAL): devices, jobs, variants with their gate outcomes, measurements,
// compiled kernels (the compile cache) and the Pareto front per (device model, family, shape,
// dtype). Every write is a transaction, so a killed daemon loses nothing it reported as stored.
// Thread-safe: one connection behind a mutex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/config.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/measure/interleaved_protocol.hpp"
#include "tuner/measure/protocol.hpp"
#include "tuner/pareto.hpp"
#include "tuner/variant_status.hpp"

namespace SQLite {
class Database;
}

namespace kt {

struct NewJob {
  std::string family;
  Shape shape;
  std::string dtype;
  std::string mode = "tune";           // "tune" | "compile"
  std::string arch;                    // target arch (compile mode) or the device's
  std::string device_uuid;             // "" for compile mode
  std::string device_name;             // the device model, "" for compile mode
  std::int64_t budget = 0;             // max variants to run through the gates; 0 = all
  std::string pipeline = "pipelined";  // "pipelined" (compile ahead, every GPU) | "serial"
  std::string pinned_configs_json;     // pinned_configs_to_text(...); "" = the whole space
};

struct JobRecord {
  std::int64_t id = 0;
  std::string family;
  Shape shape;
  std::string shape_key;  // canonical_key(shape)
  std::string dtype;
  std::string mode;
  std::string arch;
  std::string device_uuid;
  std::string device_name;
  std::int64_t budget = 0;
  JobStatus status = JobStatus::queued;
  std::string reason;  // why failed / cancelled
  bool cancel_requested = false;
  std::optional<double> reference_us;  // cuBLAS (the family's reference) median, same job
  std::string created_at, started_at, finished_at;  // ISO 8601 UTC, "" if not yet
  std::string pipeline = "pipelined";
  std::string pinned_configs_json;         // "" = the whole space
  int gpus = 0;                            // GPUs the job's variants were spread over (0: none yet)
  std::optional<double> wall_seconds;      // first variant handed out -> last result, all runs
  std::optional<double> gpu_busy_seconds;  // workers inside measure calls for its variants
  // The interleaved re-measure of the top candidates (record_winner_comparison); unset before.
  std::optional<std::int64_t> winner_variant_id;
  std::optional<std::int64_t> runner_up_variant_id;
  std::optional<bool> winner_distinguishable;
  std::optional<double> winner_margin;  // runner_up_median / winner_median - 1, interleaved
  // The two variants' own stored medians (their measurement rows), for display.
  std::optional<double> winner_median_us;
  std::optional<double> runner_up_median_us;
};

struct VariantRecord {
  std::int64_t id = 0;
  std::int64_t job_id = 0;
  std::string template_name;
  Config config;
  std::string config_key;
  VariantStatus status = VariantStatus::pending;
  std::string failed_gate;
  std::string reason;
  std::string compile_log;
  std::string kernel_key;  // compile cache key, "" if not compiled
  int registers = -1;
  int spill_bytes = -1;  // spill stores + loads
  int smem_bytes = -1;   // static + dynamic shared memory per block
  int threads = 0;       // threads per block
  double compile_ms = 0;
  std::optional<TimingSummary> timing;
  std::optional<ErrorSummary> error;
  double tflops = 0;
  double gbps = 0;
  std::optional<double> speedup;   // reference_us / median_us
  std::optional<int> gpu_ordinal;  // the GPU that measured it, unset before a worker saw it
  double measure_ms = 0;           // wall time of the worker's measure call (load, check, time)
};

struct JobProgress {
  std::int64_t total = 0;     // variants planned
  std::int64_t finished = 0;  // variants in a final state
  std::map<std::string, std::int64_t> by_status;
};

// What the runner stores when a variant leaves the gates.
struct VariantOutcome {
  VariantStatus status = VariantStatus::pending;
  std::string failed_gate;
  std::string reason;
  std::optional<TimingSummary> timing;
  std::optional<ErrorSummary> error;
  double tflops = 0, gbps = 0;
  std::optional<double> speedup;
};

struct KernelBlob {
  std::string key;
  std::string arch;
  std::string kernel;  // entry point
  std::string nvrtc_version;
  std::vector<char> cubin;
  std::string log;
  ResourceUsage resources;
};

struct BestEntry {
  JobRecord job;
  VariantRecord variant;
};

struct JobFilter {
  std::string family;  // "" = any
  std::optional<JobStatus> status;
  int limit = 50;  // negative = no limit
  int offset = 0;
};

class Store {
 public:
  // Opens (creating if needed) the file, enables WAL and foreign keys, applies migrations up to
  // the current schema version. Throws std::runtime_error with the path on failure.
  explicit Store(const std::filesystem::path& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version();

  // Devices, keyed by UUID (required: std::invalid_argument if empty); returns the row id.
  std::int64_t upsert_device(const DeviceInfo& device);
  std::vector<DeviceInfo> devices();

  // Jobs.
  std::int64_t create_job(const NewJob& job);
  std::optional<JobRecord> job(std::int64_t id);
  std::vector<JobRecord> jobs(const JobFilter& filter);  // newest first
  std::vector<std::int64_t> unfinished_jobs();           // queued or running, oldest first
  // Sets status and reason (replacing the old reason). started_at is stamped the first time a
  // job runs, finished_at when it becomes done/failed/cancelled. A job already in a final state
  // keeps it (the call is a no-op), so a cancel is never overwritten by a late "running".
  // Becoming cancelled also marks the job's pending variants cancelled.
  void set_job_status(std::int64_t id, JobStatus status, const std::string& reason = "");
  void set_job_reference(std::int64_t id, double reference_us);
  // Marks cancel_requested; a queued job becomes cancelled at once (its pending variants too).
  // False if unknown or final.
  bool request_cancel(std::int64_t id);

  // Variants: plans are inserted once per (job, template, config); re-inserting is a no-op, so a
  // resumed job keeps its finished variants. Returns all variants of the job in plan order.
  std::vector<VariantRecord> plan_variants(std::int64_t job_id,
                                           const std::vector<VariantRecord>& planned);
  // gated_only: leave out pruned and unsupported_arch rows (most of a large space).
  std::vector<VariantRecord> variants(std::int64_t job_id, bool gated_only = false);
  // The job's measured variant with the lowest median time, if any.
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
  JobProgress progress(std::int64_t job_id);
  // Stores who won the interleaved re-measure of the job's top candidates and whether the winner
  // is distinguishable from the runner-up (jobs.winner_*). Recording again replaces it.
  // std::invalid_argument for an unknown job or a winner that is not one of its variants.
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

  // Compile cache.
  std::optional<KernelBlob> find_kernel(const std::string& key);
  void put_kernel(const KernelBlob& blob);

  // Pareto front and best (lowest median time on the front) for a device model ("" = any).
  std::vector<VariantRecord> pareto(const std::string& family, const std::string& dtype,
                                    const std::string& shape_key, const std::string& device_name);
  std::optional<BestEntry> best(const std::string& family, const std::string& dtype,
                                const std::string& shape_key, const std::string& device_name);

 private:
  std::mutex mutex_;
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace kt
