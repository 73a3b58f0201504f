// Which GPU runs which job's next piece of GPU work: the sharing policy of the engine, kept apart
// from threads and workers so it can be tested on its own.
//
// Policy: a tune job may use every GPU of the host that is the same model (name and arch) as the
// device it was submitted for, so one job's variants spread over all of them. Several jobs run at
// once; when they want the same GPUs, each GPU that becomes free serves the jobs in turn (round
// robin, one task at a time), so every job gets an equal share of the GPUs it may use and a job
// alone gets all of them. A task may be pinned to one GPU (a serial job's variants, or a step
// that must run where an earlier one ran); other GPUs pass over it. Within a job, tasks start in
// the order they were posted.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "tuner/device_limits.hpp"

namespace kt {

class WorkerClient;

// One piece of GPU work: runs on the lane of one GPU, with that GPU's worker.
using GpuTask = std::function<void(WorkerClient& worker, const DeviceInfo& device)>;

class GpuTaskQueue {
 public:
  struct Picked {
    std::int64_t job_id = 0;
    GpuTask task;
  };

  // Registers a job and the GPUs (ordinals) it may use; re-opening replaces the list.
  void open(std::int64_t job_id, std::vector<int> ordinals);
  // Forgets the job; returns how many of its tasks were still queued (they are dropped).
  std::size_t close(std::int64_t job_id);
  // Queues a task of an open job (std::invalid_argument otherwise). pinned: only that GPU may run
  // it.
  void push(std::int64_t job_id, GpuTask task, std::optional<int> pinned = std::nullopt);
  // The next task GPU `ordinal` should run, if any job has one for it; the job after the one
  // served last is asked first.
  std::optional<Picked> pop_for(int ordinal);
  // Drops the job's queued tasks (not the running ones); returns how many.
  std::size_t drop(std::int64_t job_id);
  std::size_t queued(std::int64_t job_id) const;
  std::size_t queued() const;

 private:
  struct Entry {
    GpuTask task;
    std::optional<int> pinned;
  };
  struct JobEntry {
    std::int64_t job_id = 0;
    std::vector<int> ordinals;
    std::deque<Entry> tasks;
  };
  JobEntry* find(std::int64_t job_id);
  const JobEntry* find(std::int64_t job_id) const;

  std::vector<JobEntry> jobs_;  // in the order they were opened
  std::size_t next_ = 0;        // index of the job asked first by the next pop_for
};

// GPUs of the same model as `device` (same name and arch) among `devices`, ascending ordinals;
// the device itself is always in it.
std::vector<int> same_model_ordinals(const std::vector<DeviceInfo>& devices,
                                     const DeviceInfo& device);

}  // namespace kt
