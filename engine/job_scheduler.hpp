// Runs jobs off the I/O threads. Tune jobs queue per GPU model (same name and arch): a model with
// G GPUs runs up to G of its jobs at once, and each running job spreads its variants over all G
// GPUs, sharing them with the others in turn (GpuTaskQueue has the policy). Compile-only jobs run
// one at a time on their own runner. Those limits count jobs past planning: one more job per
// queue may plan meanwhile, so a job planning millions of configurations keeps no other waiting.
// Jobs left queued or running by a previous daemon are resumed at start(); finished variants are
// not repeated.
//
// A fleet: every daemon on one database registers itself at start() (host, pid, GPUs) and claims
// a job's variants with leases (db/lease_store.cpp). A heartbeat thread extends this daemon's
// leases, expires lapsed ones of daemons that died, and takes up unfinished jobs another daemon
// queued, so any daemon on the database works on any job it can run. On PostgreSQL a job this
// host cannot run (its GPU model is elsewhere) is left to the daemons that can; on SQLite (one
// daemon) it fails, as before.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/store.hpp"
#include "engine/engine_metrics.hpp"
#include "engine/gpu_pool.hpp"
#include "engine/job_events.hpp"
#include "engine/job_runner.hpp"
#include "engine/job_target.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

class JobScheduler {
 public:
  // devices: what the worker probe found (may be empty: compile jobs still run).
  JobScheduler(Store& store, const FamilyRegistry& families, SchedulerOptions options,
               std::vector<DeviceInfo> devices);
  ~JobScheduler();  // stop()
  JobScheduler(const JobScheduler&) = delete;
  JobScheduler& operator=(const JobScheduler&) = delete;

  // Starts the runner threads and the GPU lanes and re-queues unfinished jobs from the store, each
  // with its target resolved again on this host (a job whose GPU model is gone fails).
  void start();
  // Asks running jobs to stop after their current variant (a job planning stops within
  // kStopCheckInterval) and joins the threads. Jobs stay "running" in the store, so the next
  // daemon resumes them.
  void stop();
  // Queues a job already created in the store (status queued), for the target it was checked
  // against (resolve_target with this scheduler's devices).
  void enqueue(const JobRecord& job, JobTarget target);
  // Requests cancellation (stored); a running job stops after its current variant.
  bool cancel(std::int64_t job_id);

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  // Live progress of the jobs, for the event streams.
  JobEventHub& events() { return events_; }
  // Threads the compiles run on (a job's estimate divides its compiles among them).
  int compile_threads() const { return compile_threads_; }
  // GET /metrics: the engine's counters (EngineMetrics), worker restarts included.
  std::vector<prometheus::MetricFamily> metric_families() const;
  // How many times workers were started again after their first start (a crash, a hang, an
  // illegal access each cost one).
  std::uint64_t worker_restarts() const;

 private:
  struct Queue;  // jobs waiting for one of its runners: compile-only, or one GPU model
  void run_queue(Queue& queue);
  void keep_leases();  // the heartbeat thread
  void take_up_unfinished_jobs();
  void resume(std::int64_t job_id);
  Queue* queue_for(const JobTarget& target, std::vector<int>* ordinals);
  bool is_stopping();

  Store& store_;
  const FamilyRegistry& families_;
  SchedulerOptions options_;
  std::vector<DeviceInfo> devices_;
  std::unique_ptr<ThreadPool> compile_pool_;
  int compile_threads_ = 1;
  std::unique_ptr<GpuPool> gpu_pool_;
  std::vector<std::unique_ptr<Queue>> queues_;  // [0]: compile-only; then one per GPU model
  EngineMetrics metrics_{devices_};
  JobEventHub events_;
  std::uint64_t seed_ = 1;
  std::thread heartbeat_;
  std::condition_variable heartbeat_wake_;
  std::set<std::int64_t> active_;          // jobs queued or running here
  std::set<std::int64_t> left_to_others_;  // jobs this host cannot run (logged once)
  std::set<std::int64_t> watched_;         // unfinished at the last heartbeat (heartbeat thread)
  bool started_ = false;
  bool stopping_ = false;
  std::mutex mutex_;
};

}  // namespace kt
