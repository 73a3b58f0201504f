// One job through the gates: plan the variant space, compile, check and time every variant on the
// GPUs of the job's model, record every outcome as it happens, then the final comparison: the top
// candidates and the baseline re-measured interleaved (the job's result).
//
// Pipelines (jobs.pipeline):
//   pipelined  compiles run ahead on the thread pool (every core) while the GPUs measure; each
//              compiled variant becomes a GPU task that any GPU of the job's model may take
//   serial     compile one variant, measure it on the job's own GPU, then the next: the baseline
//              the pipelined engine is compared with
// Compile-only jobs (JobMode::compile) compile ahead on the pool and touch no GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "db/store.hpp"
#include "engine/compile_client.hpp"
#include "engine/engine_metrics.hpp"
#include "engine/gpu_pool.hpp"
#include "engine/job_events.hpp"
#include "engine/job_target.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

class ShapePredictors;

struct SchedulerOptions {
  std::filesystem::path worker_exe;  // kerntune-worker
  std::filesystem::path work_dir;    // cubins handed to workers live here
  int compile_threads = 0;           // 0: hardware concurrency
  // Compile threads run this much nicer than the daemon: under contention NVRTC yields the cores
  // to the HTTP and query threads, so a long compile job does not stretch request latencies.
  // SCHED_IDLE by default: compiles take only CPU time that serving requests does not want.
  int compile_nice = kIdleNice;
  // NVRTC runs in a compile process per compile thread (engine/compile_client.hpp); one that gives
  // no answer within this time is killed and the variant recorded as hang (gate compile).
  std::chrono::milliseconds compile_timeout = kDefaultCompileTimeout;
  // How child processes run (server/main.cpp decides): compile processes confined to reading
  // the CUDA headers; compile processes and workers as which account (none: the daemon's).
  bool confined_compiles = false;
  std::optional<ProcessUser> run_as;
  TimingOptions timing;
  std::chrono::milliseconds min_watchdog{20000};  // worker timeout floor, reference time unknown
  std::uint64_t seed = 0;                         // 0: a random seed per daemon run
  // Snapshots of a job's progress go to its event streams at most this often.
  std::chrono::milliseconds event_interval{250};
  // The final comparison at the end of a tune job: this many of the fastest variants (by their
  // first-pass medians) and the family's baseline are re-measured interleaved on one GPU; the
  // job's result (winner, speedup and its interval) comes from those samples (< 1: none).
  int final_candidates = 5;
  // The fleet (db/lease_store.cpp): a job's variants are claimed in batches under a lease of this
  // length, which a heartbeat extends this often; the heartbeat also expires other daemons'
  // lapsed leases and looks for jobs other daemons queued.
  std::chrono::milliseconds lease{30000};
  std::chrono::milliseconds heartbeat{10000};
  // The predicted searcher's rankings (engine/shape_predictors.hpp); null: it runs as local.
  const ShapePredictors* predictors = nullptr;
};

struct JobRunContext {
  Store& store;
  const FamilyRegistry& families;
  const SchedulerOptions& options;
  ThreadPool& compile_pool;
  GpuPool* gpus = nullptr;    // null for compile-only jobs
  JobTarget target;           // resolved when the job was queued
  std::vector<int> ordinals;  // the GPUs of the job's model (its own device first); empty: none
  std::uint64_t seed = 1;
  std::function<bool()> stopping;    // daemon shutdown: leave the job resumable
  EngineMetrics* metrics = nullptr;  // counts outcomes and latencies for GET /metrics
  JobEventHub* events = nullptr;     // told of every change, for the event streams
  // Asked once the job is planned, before its first variant: true when one of the queue's
  // running places is free and now the job's (it waits at most about 100 ms). Planning holds
  // none, so a job planning a large space does not keep the others waiting. Empty: no limit.
  std::function<bool()> take_place;
};

// Runs the job to done / failed / cancelled, or returns early (job left "running") when
// ctx.stopping() turns true. Never throws: unexpected errors fail the job with the reason. The
// runner is the one writer of the job's progress: the compile and GPU steps return what happened
// and the runner records it (job_recorder.hpp).
void run_job(std::int64_t job_id, JobRunContext& ctx);

}  // namespace kt
