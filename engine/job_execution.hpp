// Internal to engine/: one run of one job (run_job, engine/job_runner.hpp). The shared core is
// here and in job_execution.cpp: the job's state, claiming its variants, compiling and recording
// them, the event stream, interruption and timing. The four pipelines each have a file:
//   job_execution_pipelined.cpp     compiles ahead on the pool, any GPU of the model measures
//   job_execution_serial.cpp        compile one, measure it on the job's own GPU, then the next
//   job_execution_compile_only.cpp  compile-only jobs: no GPU
//   job_execution_searched.cpp      a searcher picks the variants (engine/job_search.hpp)
// What a GPU lane does for a variant (the baseline on that GPU, then the measurement) is in
// job_execution_lane.cpp, and the final comparison (the top candidates and the baseline
// re-measured interleaved) in job_execution_final.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "engine/compile_queue.hpp"
#include "engine/job_compile.hpp"
#include "engine/job_runner.hpp"
#include "engine/job_stats.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

class WorkerClient;

class JobExecution {
 public:
  JobExecution(JobRecord job, const Family& family, DeviceLimits limits, JobRunContext& ctx)
      : job_(std::move(job)),
        family_(family),
        limits_(std::move(limits)),
        ctx_(ctx),
        base_wall_seconds_(job_.wall_seconds.value_or(0)),
        base_busy_seconds_(job_.gpu_busy_seconds.value_or(0)) {}

  // The job to done / failed / cancelled, or paused for a shutdown (run_job's contract).
  void run();

 private:
  using NextVariant = std::function<std::optional<VariantRecord>()>;

  // The pipelines (one file each); false when the job was interrupted (and left paused or
  // cancelled by finish_interrupted).
  bool run_pipelined(const NextVariant& next, std::size_t lookahead);
  bool run_serial(const NextVariant& next);
  bool run_compile_only(const NextVariant& next);
  // A searched job (engine/job_search.hpp): the searcher hands out batches while the pipeline
  // runs; everything after the sweep is as for a planned job.
  void run_searched();

  // The job's planned variants that no daemon holds, claimed for this one a batch at a time.
  NextVariant claimed_in_batches();
  // Nothing left to claim: while other daemons hold some of the job's variants, waits for them
  // (polling at the heartbeat) until some became claimable again (released, or an expired
  // lease), none is pending (the sweep is over), or the job was interrupted (and left paused or
  // cancelled by finish_interrupted).
  enum class Wait { claimable, over, interrupted };
  Wait wait_for_other_daemons();

  // Compile tasks on the pool, up to `lookahead` ahead of the consumer; false once `next` has
  // nothing more to give.
  bool fill(CompileQueue& compiling, const NextVariant& next, std::size_t lookahead, bool timed);
  // Gates 1-2 for one variant, recorded as they come back (on the compile pool's threads).
  CompiledVariant compile(const VariantRecord& variant);
  // Another daemon owns the variant now (or the job was cancelled): it is not ours to go on.
  CompiledVariant lease_lost(CompiledVariant cv, const LeaseLost& lost) const;
  void attach_reference(CompiledVariant& cv) const;
  // NVRTC in the calling thread's compile process (engine/compile_client.hpp), never in the
  // daemon: a compiler crash is then the variant's outcome, not the daemon's end.
  KernelCompiler compiler() const;
  KernelLookup cached_kernel() const;

  // The variant's measurement as a task of the job's queue on the GPU pool (pinned: that GPU's
  // lane only), recorded when it comes back (job_execution_lane.cpp).
  void post_measure(CompiledVariant cv, std::optional<int> pinned);
  // The baseline on one GPU: its median (0 when unknown) and whether speedups rest on it.
  struct BaselineOnGpu {
    double us = 0;
    bool speedup_base = false;
  };
  // The family's baseline (cublasLt at its best for GEMM), timed once on every GPU the job uses,
  // in that GPU's own lane before its first variant: a variant's first-pass speedup is over the
  // baseline of the GPU that measured it. Runs on the GPU's lane thread. A baseline that fails
  // (every candidate computed a wrong result, or it could not run) is a finding, not a failed job:
  // it is recorded with the reason and the job goes on against the reference alone. Throws only
  // when a kernel reference, timed for the watchdog, cannot run (no variant could be checked).
  BaselineOnGpu baseline_on(WorkerClient& worker, const DeviceInfo& device,
                            const ProblemInstance& problem);
  BaselineOnGpu baseline_failed(const DeviceInfo& device, const std::string& why,
                                const std::optional<BaselineTiming>& answer);
  // Whether speedups and the final comparison may rest on the baseline: it has one that did not
  // fail on any GPU, in this run or (a resumed job) an earlier one. baseline_mutex_ held.
  bool baseline_usable() const;

  // The job's result: its fastest few variants and the baseline re-measured interleaved on one
  // GPU (same buffers' shapes, same flush, same method), the speedup of each with its interval.
  // A failure here costs the comparison, not the job; the first-pass figures stay.
  void final_comparison();
  // A tune job with no variant to compare (nothing survived the constraints, or every variant
  // failed before a GPU lane ran) still times the baseline once, on its own problem, so the job
  // ends with the baseline as its answer (/v1/best) instead of nothing. Nothing to do when a lane
  // already timed it (this run, or a run before a restart). A failure costs the answer only.
  void time_baseline_alone();
  // A library baseline chose its algorithm by timing in the job's first pass; the final
  // comparison runs that same algorithm (from this run, or from the stored baselines of a resumed
  // job), so the job is compared with one baseline throughout.
  void keep_baseline_choice(ProblemInstance& problem);

  // The family's for the job's dtype. A loaded family has one for every dtype it lists and a job
  // is only accepted for those, so a missing one is an error (FamilyError fails the job), never
  // a silent default.
  const Tolerance& tolerance() const { return tolerance_for(family_, job_.dtype); }

  // For the event streams: the hub reads the job again soon (cheap, no query here).
  void changed() {
    if (ctx_.events) ctx_.events->touch(job_.id);
  }

  // Waits for one of the queue's running places (JobRunContext::take_place), the plan stored;
  // false, the job paused or cancelled, when it was interrupted meanwhile.
  bool take_place();
  bool interrupted();
  void stop_gpu_work();
  // Paused for a shutdown (the leases go back at stop), or cancelled: the store closes every
  // pending variant of the job with the cancel, whichever daemon held it.
  void finish_interrupted();
  // Wall and busy time so far, this run added to the earlier runs of a resumed job. Lanes call
  // it concurrently: the lock keeps a later figure from being overwritten by an earlier one.
  void publish_timing();
  void note_task_error(const std::string& message);
  // A GPU task hit an error that is not a variant's fault (the worker refused the request):
  // every later variant would fail the same way, so the job fails.
  void rethrow_task_error();

  JobRecord job_;
  const Family& family_;
  DeviceLimits limits_;
  JobRunContext& ctx_;
  JobTimeline timeline_;
  const double base_wall_seconds_;
  const double base_busy_seconds_;
  std::mutex publish_mutex_;
  std::mutex baseline_mutex_;
  std::map<int, double> baseline_us_;              // GPU ordinal -> the baseline's median there
  std::optional<nlohmann::json> baseline_choice_;  // what the first GPU's baseline was
  std::optional<std::string> baseline_failure_;    // why the baseline failed, on any GPU
  std::optional<std::filesystem::path> reference_cubin_;  // a kernel reference, compiled
  std::mutex task_error_mutex_;
  std::optional<std::string> task_error_;
};

}  // namespace kt
