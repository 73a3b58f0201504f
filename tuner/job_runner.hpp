// One job through the gates: plan the variant space, compile ahead on a thread pool while the
// GPU worker checks and times variants in plan order, record every outcome as it happens.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>

#include "db/store.hpp"
#include "tuner/family.hpp"
#include "tuner/measure/protocol.hpp"
#include "tuner/measure/worker_client.hpp"
#include "tuner/thread_pool.hpp"

namespace kt {

struct SchedulerOptions {
  std::filesystem::path worker_exe;  // kerntune-worker
  std::filesystem::path work_dir;    // cubins handed to workers live here
  int compile_threads = 0;           // 0: hardware concurrency
  TimingOptions timing;
  std::chrono::milliseconds min_watchdog{20000};  // per-variant worker timeout floor
  std::uint64_t seed = 0;                         // 0: a random seed per daemon run
};

struct JobRunContext {
  Store& store;
  const FamilyRegistry& families;
  const SchedulerOptions& options;
  ThreadPool& compile_pool;
  const DeviceInfo* device = nullptr;  // the lane's GPU; null for the compile-only lane
  WorkerClient* worker = nullptr;      // null for the compile-only lane
  std::uint64_t seed = 1;
  std::function<bool()> stopping;  // daemon shutdown: leave the job resumable
};

// Runs the job to done / failed / cancelled, or returns early (job left "running") when
// ctx.stopping() turns true. Never throws: unexpected errors fail the job with the reason.
void run_job(std::int64_t job_id, JobRunContext& ctx);

}  // namespace kt
