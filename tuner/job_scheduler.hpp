// Runs jobs off the I/O threads: a queue of job ids served by one runner thread per GPU (tune
// jobs) and one for compile-only jobs. Jobs left queued or running by a previous daemon are
// resumed at start(); finished variants are not repeated.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/store.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/job_runner.hpp"
#include "tuner/measure/protocol.hpp"

namespace kt {

class JobScheduler {
 public:
  // devices: what the worker probe found (may be empty: compile jobs still run).
  JobScheduler(Store& store, const FamilyRegistry& families, SchedulerOptions options,
               std::vector<DeviceInfo> devices);
  ~JobScheduler();  // stop()
  JobScheduler(const JobScheduler&) = delete;
  JobScheduler& operator=(const JobScheduler&) = delete;

  // Starts the runner threads and re-queues unfinished jobs from the store.
  void start();
  // Asks running jobs to stop after their current variant and joins the threads. Jobs stay
  // "running" in the store, so the next daemon resumes them.
  void stop();
  // Queues a job already created in the store (status queued).
  void enqueue(std::int64_t job_id);
  // Requests cancellation (stored); a running job stops after its current variant.
  bool cancel(std::int64_t job_id);

  const std::vector<DeviceInfo>& devices() const { return devices_; }

 private:
  struct Lane;  // one queue + thread: a GPU, or compile-only
  void run_lane(Lane& lane);
  Lane* lane_for(const JobRecord& job);
  bool is_stopping();

  Store& store_;
  const FamilyRegistry& families_;
  SchedulerOptions options_;
  std::vector<DeviceInfo> devices_;
  std::unique_ptr<ThreadPool> compile_pool_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // [0]: compile-only; then one per device
  std::uint64_t seed_ = 1;
  bool started_ = false;
  bool stopping_ = false;
  std::mutex mutex_;
};

}  // namespace kt
