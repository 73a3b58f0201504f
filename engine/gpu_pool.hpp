// Every GPU of the host with its own measurement worker and its own thread (a lane). Jobs post GPU
// tasks (time the reference, check and time a variant, re-measure the top candidates); each lane
// runs the tasks GpuTaskQueue assigns to its GPU, one at a time. The worker process belongs to the
// lane, so a variant that kills its worker costs only that GPU's next task a restart.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/child_process.hpp"
#include "engine/gpu_task_queue.hpp"
#include "tuner/device_limits.hpp"

namespace kt {

class GpuPool {
 public:
  // With `user`, the workers run as that account.
  GpuPool(std::vector<DeviceInfo> devices, std::filesystem::path worker_exe,
          std::optional<ProcessUser> user = std::nullopt);
  ~GpuPool();  // stop()
  GpuPool(const GpuPool&) = delete;
  GpuPool& operator=(const GpuPool&) = delete;

  // Starts one lane per device.
  void start();
  // Lanes finish the task they run and exit; queued tasks are dropped (never run), so waiters of
  // wait_below return once the running ones are done. Idempotent.
  void stop();

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  const DeviceInfo* device(int ordinal) const;
  // Worker starts after each lane's first (restarts after a crash, hang or illegal access).
  std::uint64_t worker_restarts() const;

  // A job's GPU work: open before posting, close when done (drops what is still queued).
  void open(std::int64_t job_id, std::vector<int> ordinals);
  void close(std::int64_t job_id);
  // Queues a task; after stop() it is dropped at once. A task that throws is logged and counted
  // as finished: tasks report their own errors (e.g. through a promise).
  void post(std::int64_t job_id, GpuTask task, std::optional<int> pinned = std::nullopt);
  // Blocks until fewer than `limit` of the job's tasks are queued or running (a stopped pool runs
  // nothing, so then it returns).
  void wait_below(std::int64_t job_id, std::size_t limit);
  // Drops the job's queued tasks; running ones finish.
  void drop_queued(std::int64_t job_id);
  // The job's tasks queued or running.
  std::size_t outstanding(std::int64_t job_id);

 private:
  struct Lane;
  void run_lane(Lane& lane);
  void finished(std::int64_t job_id, std::size_t count);  // caller holds mutex_

  std::vector<DeviceInfo> devices_;
  std::filesystem::path worker_exe_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  GpuTaskQueue queue_;
  std::map<std::int64_t, std::size_t> outstanding_;  // queued + running, per job
  std::mutex mutex_;
  std::condition_variable work_;  // lanes: a task was queued, or stop
  std::condition_variable done_;  // waiters: a task finished or was dropped, or stop
  bool started_ = false;
  bool stopping_ = false;
};

}  // namespace kt
