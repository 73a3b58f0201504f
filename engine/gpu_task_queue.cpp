#include "engine/gpu_task_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kt {

GpuTaskQueue::JobEntry* GpuTaskQueue::find(std::int64_t job_id) {
  for (JobEntry& job : jobs_)
    if (job.job_id == job_id) return &job;
  return nullptr;
}

const GpuTaskQueue::JobEntry* GpuTaskQueue::find(std::int64_t job_id) const {
  for (const JobEntry& job : jobs_)
    if (job.job_id == job_id) return &job;
  return nullptr;
}

void GpuTaskQueue::open(std::int64_t job_id, std::vector<int> ordinals) {
  if (JobEntry* job = find(job_id)) {
    job->ordinals = std::move(ordinals);
    return;
  }
  jobs_.push_back(JobEntry{job_id, std::move(ordinals), {}});
}

std::size_t GpuTaskQueue::close(std::int64_t job_id) {
  const auto it = std::find_if(jobs_.begin(), jobs_.end(),
                               [&](const JobEntry& job) { return job.job_id == job_id; });
  if (it == jobs_.end()) return 0;
  const std::size_t dropped = it->tasks.size();
  const auto index = static_cast<std::size_t>(it - jobs_.begin());
  jobs_.erase(it);
  // Keep the turn where it was: the job after the removed one moved down by one.
  if (next_ > index) --next_;
  if (next_ >= jobs_.size()) next_ = 0;
  return dropped;
}

void GpuTaskQueue::push(std::int64_t job_id, GpuTask task, std::optional<int> pinned) {
  JobEntry* job = find(job_id);
  if (job == nullptr)
    throw std::invalid_argument("GPU task for job " + std::to_string(job_id) +
                                ", which has no open queue");
  job->tasks.push_back(Entry{std::move(task), pinned});
}

std::optional<GpuTaskQueue::Picked> GpuTaskQueue::pop_for(int ordinal) {
  const std::size_t n = jobs_.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t index = (next_ + k) % n;
    JobEntry& job = jobs_[index];
    if (std::find(job.ordinals.begin(), job.ordinals.end(), ordinal) == job.ordinals.end())
      continue;
    const auto task = std::find_if(job.tasks.begin(), job.tasks.end(), [&](const Entry& entry) {
      return !entry.pinned || *entry.pinned == ordinal;
    });
    if (task == job.tasks.end()) continue;
    Picked picked{job.job_id, std::move(task->task)};
    job.tasks.erase(task);
    next_ = (index + 1) % n;
    return picked;
  }
  return std::nullopt;
}

std::size_t GpuTaskQueue::drop(std::int64_t job_id) {
  JobEntry* job = find(job_id);
  if (job == nullptr) return 0;
  const std::size_t dropped = job->tasks.size();
  job->tasks.clear();
  return dropped;
}

std::size_t GpuTaskQueue::queued(std::int64_t job_id) const {
  const JobEntry* job = find(job_id);
  return job == nullptr ? 0 : job->tasks.size();
}

std::size_t GpuTaskQueue::queued() const {
  std::size_t total = 0;
  for (const JobEntry& job : jobs_) total += job.tasks.size();
  return total;
}

std::vector<int> same_model_ordinals(const std::vector<DeviceInfo>& devices,
                                     const DeviceInfo& device) {
  std::vector<int> ordinals;
  for (const DeviceInfo& other : devices)
    if (other.name == device.name && other.arch == device.arch) ordinals.push_back(other.ordinal);
  if (std::find(ordinals.begin(), ordinals.end(), device.ordinal) == ordinals.end())
    ordinals.push_back(device.ordinal);
  std::sort(ordinals.begin(), ordinals.end());
  ordinals.erase(std::unique(ordinals.begin(), ordinals.end()), ordinals.end());
  return ordinals;
}

}  // namespace kt
