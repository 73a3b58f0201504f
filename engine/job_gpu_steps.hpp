// The GPU half of a job's gates, as steps a GPU lane runs with its worker: check and time one
// compiled variant and say what happened (the runner records it); and the pieces the runner
// builds them from.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "db/model.hpp"
#include "engine/job_compile.hpp"
#include "engine/job_runner.hpp"
#include "engine/job_stats.hpp"
#include "engine/worker_client.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

// Writes the cubin where the worker can read it; content-addressed, so an existing file is it.
std::filesystem::path materialize_cubin(const std::filesystem::path& dir,
                                        const CompiledVariant& cv);

// A per-variant seed from the job's seed: the same variant always gets the same inputs.
std::uint64_t mix_seed(std::uint64_t seed, std::int64_t variant_id);

// The worker's wait when the reference time is unknown (with it, the worker client derives the
// watchdog from the reference: watchdog.hpp).
std::chrono::milliseconds fallback_watchdog(const SchedulerOptions& options);

// Everything the worker needs to check and time the variant (cubin written to work_dir).
MeasureRequest measure_request(const CompiledVariant& cv, const JobRecord& job,
                               const Tolerance& tolerance, const SchedulerOptions& options,
                               std::uint64_t seed);

// The outcome the store keeps for a worker's answer: throughput and the speedup over the
// reference measured in the same job.
VariantOutcome outcome_of(const MeasureResult& result, const ProblemInstance& problem,
                          std::optional<double> reference_us);

// What a worker said about one variant, as the store keeps it.
struct MeasuredVariant {
  std::int64_t variant_id = 0;
  VariantOutcome outcome;
  int registers = -1;     // of the loaded kernel; -1 unknown
  int smem_bytes = -1;    // static (loaded kernel) + dynamic shared memory; -1 unknown
  int gpu_ordinal = 0;    // the GPU that measured it
  double measure_ms = 0;  // wall time of the worker's measure call
};

// Checks and times one variant on `worker`; adds the call to `timeline`. Throws what
// WorkerClient::measure throws (the worker refused the request: not this variant's fault).
MeasuredVariant measure_variant(WorkerClient& worker, const DeviceInfo& device,
                                const MeasureRequest& request, const CompiledVariant& cv,
                                std::optional<double> reference_us, const SchedulerOptions& options,
                                JobTimeline& timeline);

// The job's final-comparison candidates: its measured variants with the lowest first-pass
// medians, fastest first, at most `count` (ties broken by id).
std::vector<VariantRecord> final_candidates(std::vector<VariantRecord> variants, std::size_t count);

}  // namespace kt
