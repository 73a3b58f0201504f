// The records kerntune keeps about jobs and variants, as the store reads and writes them: what
// the engine records, what the server shows. Plain values; the store (db/store.hpp) persists them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/config.hpp"
#include "tuner/interleaved_protocol.hpp"
#include "tuner/measure_protocol.hpp"
#include "tuner/variant_status.hpp"

namespace kt {

// What a job does: tune (check and time every variant on a GPU), compile only (no GPU), or check
// (its pinned configs checked against the reference and timed on a GPU, like a tune job, but its
// results rank on no front: no answer rests on a check, and no final comparison is run).
enum class JobMode { tune, compile, check };
// How a tune job goes: compiles ahead on every core while every GPU of its model measures, or one
// variant at a time on its own GPU (the baseline the pipelined engine is compared with).
enum class Pipeline { pipelined, serial };

// The text of the API and of the jobs table ("tune", "compile", "check"; "pipelined", "serial"),
// both ways; nullopt for unknown text.
std::string_view to_string(JobMode mode);
std::optional<JobMode> job_mode_from_string(std::string_view text);
std::string_view to_string(Pipeline pipeline);
std::optional<Pipeline> pipeline_from_string(std::string_view text);

struct NewJob {
  std::string family;
  Shape shape;
  std::string dtype;
  JobMode mode = JobMode::tune;
  std::string arch;         // target arch (compile mode) or the device's
  std::string device_uuid;  // "" for compile mode
  std::string device_name;  // the device model, "" for compile mode
  std::int64_t budget = 0;  // max variants to run through the gates; 0 = all
  Pipeline pipeline = Pipeline::pipelined;
  std::string pinned_configs_json;  // pinned_configs_to_text(...); "" = the whole space
  // The searcher (tuner/search/searcher.hpp) and its stop conditions besides the budget: wall
  // seconds, and batches without an improvement above the noise (0: none). "" = the plan's
  // order (jobs older than the searchers).
  std::string search;
  double search_seconds = 0;
  int search_patience = 0;
  // What can change a result besides the GPU model (device_name): the driver version
  // (cuDriverGetVersion, 0 = unknown), NVRTC's version and the family source's hash
  // (Family::source_hash), as they were when the job was submitted. "" = not recorded (jobs
  // older than these keys, compile jobs have no driver).
  int driver_version = 0;
  std::string nvrtc_version;
  std::string family_hash;
  // The warm start the job's search was seeded with (engine/warm_start.hpp: the nearest tuned
  // shapes and their top configs, as JSON); "" = none.
  std::string warm_start_json;
};

struct JobRecord {
  std::int64_t id = 0;
  std::string family;
  Shape shape;
  std::string shape_key;  // canonical_key(shape)
  std::string dtype;
  JobMode mode = JobMode::tune;
  std::string arch;
  std::string device_uuid;
  std::string device_name;
  std::int64_t budget = 0;
  JobStatus status = JobStatus::queued;
  std::string reason;  // why failed / cancelled
  bool cancel_requested = false;
  std::optional<double> reference_us;  // cuBLAS (the family's reference) median, same job
  std::string created_at, started_at, finished_at;  // ISO 8601 UTC, "" if not yet
  Pipeline pipeline = Pipeline::pipelined;
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
  // The baseline as timed on each GPU the job used: {"<ordinal>": {"median_us", "timing",
  // "baseline" (what it was: kind, algorithm)}}; a variant's first-pass speedup is over its GPU's.
  // A baseline that could not stand as one (every candidate computed a wrong result, or it
  // could not run) is {"failed": reason, "baseline": ...} with no median: the job went on against
  // the reference alone (job_baseline_failure below).
  nlohmann::json baselines = nlohmann::json::object();
  // The final comparison: the top candidates and the baseline re-measured interleaved, with
  // speedups and their intervals. The job's result; unset before the job finished tuning.
  std::optional<InterleavedResult> final_comparison;
  std::string search;  // as in NewJob
  double search_seconds = 0;
  int search_patience = 0;
  // As in NewJob. What can change a result besides the GPU model (device_name): the driver version
  // (cuDriverGetVersion, 0 = unknown), NVRTC's version and the family source's hash
  // (Family::source_hash), as they were when the job was submitted. "" = not recorded (jobs
  // older than these keys, compile jobs have no driver).
  int driver_version = 0;
  std::string nvrtc_version;
  std::string family_hash;
  // The warm start the job's search was seeded with (engine/warm_start.hpp: the nearest tuned
  // shapes and their top configs, as JSON); "" = none.
  std::string warm_start_json;
};

// The job's best first-pass median after its `measured`-th measured variant.
struct ConvergencePoint {
  std::int64_t measured = 0;
  std::int64_t variant_id = 0;
  double median_us = 0;  // that variant's
  double best_us = 0;    // the best so far, that variant included
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

// Configurations a constraint rejected, counted per (template, reason) with a few examples:
// a large space prunes tens of thousands, which are not worth a row each.
struct PrunedGroup {
  std::string template_name;
  std::string reason;  // "constraint failed: <constraint>"
  std::int64_t count = 0;
  std::vector<Config> examples;  // the first few, at most kPrunedExamples
};
inline constexpr std::size_t kPrunedExamples = 3;

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

// One tuned problem (a Pareto front): its key, how many points its front holds and its best
// variant (lowest median time on the front).
struct TunedProblem {
  std::string device_name;
  std::string family;
  std::string dtype;
  std::string shape_key;
  int front_size = 0;
  VariantRecord best;
};

// One version of a family a client registered (POST /v1/families): what it sent, and what the
// compile it was accepted with said.
struct RegisteredFamilyRecord {
  std::int64_t id = 0;  // a newer version has a larger id
  std::string name;
  std::string source_hash;  // Family::source_hash
  std::string manifest_json;
  std::vector<std::pair<std::string, std::string>> sources;  // file name -> text
  std::string compile_json;  // the variant compiled before it was accepted, and how it went
  std::string created_at;
};

// A family registration (POST /v1/families) from the upload to its outcome, kept in the store so
// that a poll after a restart gets the real answer and a restarted daemon compiles again what it
// was compiling.
struct FamilyRegistrationRecord {
  enum class Status { compiling, registered, failed };
  std::string id;  // random: a restarted daemon never answers for another registration's id
  std::string family;
  std::string source_hash;
  std::string previous_hash;  // the version it replaces ("" for a new name)
  Status status = Status::compiling;
  bool unchanged = false;  // this version was already the one served: answered at once, not stored
  std::string message;     // why it failed; what happened when it succeeded
  // The variant compiled before accepting (template, kernel, arch, dtype, config, ok, log, ...) as
  // JSON; "" until compiled.
  std::string compile_json;
  // The upload as sent, kept while compiling (the store drops it once the outcome is known).
  std::string manifest_json;
  std::vector<std::pair<std::string, std::string>> sources;  // file name -> text
};

// "compiling", "registered", "failed", both ways; nullopt for unknown text.
// Why the job's baseline failed on a GPU it used, if it did (the first such GPU's reason).
std::optional<std::string> job_baseline_failure(const JobRecord& job);

std::string_view to_string(FamilyRegistrationRecord::Status status);
std::optional<FamilyRegistrationRecord::Status> registration_status_from_string(
    std::string_view text);

struct JobFilter {
  std::string family;  // "" = any
  std::optional<JobStatus> status;
  std::optional<JobMode> mode;
  int limit = 50;  // negative = no limit
  int offset = 0;
};

}  // namespace kt
