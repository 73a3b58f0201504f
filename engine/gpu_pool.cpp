#include "engine/gpu_pool.hpp"

#include <spdlog/spdlog.h>

#include "engine/worker_client.hpp"

namespace kt {

struct GpuPool::Lane {
  const DeviceInfo* device = nullptr;
  std::unique_ptr<WorkerClient> worker;
  std::thread thread;
};

GpuPool::GpuPool(std::vector<DeviceInfo> devices, std::filesystem::path worker_exe,
                 std::optional<ProcessUser> user)
    : devices_(std::move(devices)), worker_exe_(std::move(worker_exe)) {
  for (const DeviceInfo& device : devices_) {
    auto lane = std::make_unique<Lane>();
    lane->device = &device;
    lane->worker = std::make_unique<WorkerClient>(worker_exe_, device.ordinal, user);
    lanes_.push_back(std::move(lane));
  }
}

std::uint64_t GpuPool::worker_restarts() const {
  std::uint64_t restarts = 0;
  for (const auto& lane : lanes_) {
    const int starts = lane->worker->starts();
    if (starts > 1) restarts += static_cast<std::uint64_t>(starts - 1);
  }
  return restarts;
}

GpuPool::~GpuPool() {
  stop();
}

void GpuPool::start() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  started_ = true;
  stopping_ = false;
  for (auto& lane : lanes_) {
    Lane* raw = lane.get();
    lane->thread = std::thread([this, raw] { run_lane(*raw); });
  }
}

void GpuPool::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!started_ || stopping_) return;
    stopping_ = true;
    // Nothing will run a queued task any more: count them out so that no waiter blocks on them.
    // Running tasks still count until they finish: their owners may not go away before that.
    for (auto& [job_id, count] : outstanding_) count -= std::min(count, queue_.drop(job_id));
  }
  work_.notify_all();
  done_.notify_all();
  for (auto& lane : lanes_)
    if (lane->thread.joinable()) lane->thread.join();
  std::lock_guard lock(mutex_);
  started_ = false;
  stopping_ = false;
  done_.notify_all();
}

const DeviceInfo* GpuPool::device(int ordinal) const {
  for (const DeviceInfo& device : devices_)
    if (device.ordinal == ordinal) return &device;
  return nullptr;
}

void GpuPool::open(std::int64_t job_id, std::vector<int> ordinals) {
  std::lock_guard lock(mutex_);
  queue_.open(job_id, std::move(ordinals));
  outstanding_.try_emplace(job_id, 0);
}

void GpuPool::close(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  finished(job_id, queue_.close(job_id));
  if (outstanding_[job_id] == 0) outstanding_.erase(job_id);
}

void GpuPool::post(std::int64_t job_id, GpuTask task, std::optional<int> pinned) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !started_) return;  // dropped: nobody would run it
    queue_.push(job_id, std::move(task), pinned);
    ++outstanding_[job_id];
  }
  work_.notify_all();  // only a lane that may run it will take it; wake all to find that one
}

void GpuPool::wait_below(std::int64_t job_id, std::size_t limit) {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] {
    const auto it = outstanding_.find(job_id);
    return !started_ || it == outstanding_.end() || it->second < limit;
  });
}

void GpuPool::drop_queued(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  finished(job_id, queue_.drop(job_id));
}

std::size_t GpuPool::outstanding(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  const auto it = outstanding_.find(job_id);
  return it == outstanding_.end() ? 0 : it->second;
}

void GpuPool::finished(std::int64_t job_id, std::size_t count) {
  if (count == 0) return;
  auto& outstanding = outstanding_[job_id];
  outstanding -= std::min(outstanding, count);
  done_.notify_all();
}

void GpuPool::run_lane(Lane& lane) {
  const int ordinal = lane.device->ordinal;
  for (;;) {
    std::optional<GpuTaskQueue::Picked> picked;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || (picked = queue_.pop_for(ordinal)); });
      if (stopping_ && !picked) break;
    }
    try {
      picked->task(*lane.worker, *lane.device);
    } catch (const std::exception& e) {
      spdlog::error("GPU {}: a task of job {} failed: {}", ordinal, picked->job_id, e.what());
    } catch (...) {
      spdlog::error("GPU {}: a task of job {} failed", ordinal, picked->job_id);
    }
    std::lock_guard lock(mutex_);
    finished(picked->job_id, 1);
  }
  lane.worker->stop();
}

}  // namespace kt
