#include "tuner/job_scheduler.hpp"

#include <random>

#include <spdlog/spdlog.h>

namespace kt {

struct JobScheduler::Lane {
  const DeviceInfo* device = nullptr;  // null: compile-only lane
  std::unique_ptr<WorkerClient> worker;
  std::deque<std::int64_t> queue;
  std::condition_variable wake;
  std::thread thread;
};

JobScheduler::JobScheduler(Store& store, const FamilyRegistry& families, SchedulerOptions options,
                           std::vector<DeviceInfo> devices)
    : store_(store),
      families_(families),
      options_(std::move(options)),
      devices_(std::move(devices)) {
  unsigned threads = options_.compile_threads > 0
                         ? static_cast<unsigned>(options_.compile_threads)
                         : std::max(1u, std::thread::hardware_concurrency());
  compile_pool_ = std::make_unique<ThreadPool>(threads);
  seed_ = options_.seed != 0 ? options_.seed : (std::random_device{}() | 1ull);
  lanes_.push_back(std::make_unique<Lane>());
  for (const DeviceInfo& device : devices_) {
    auto lane = std::make_unique<Lane>();
    lane->device = &device;
    lane->worker = std::make_unique<WorkerClient>(options_.worker_exe, device.ordinal);
    lanes_.push_back(std::move(lane));
  }
}

JobScheduler::~JobScheduler() {
  stop();
}

void JobScheduler::start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
    stopping_ = false;
  }
  for (auto& lane : lanes_) {
    Lane* raw = lane.get();
    lane->thread = std::thread([this, raw] { run_lane(*raw); });
  }
  const auto unfinished = store_.unfinished_jobs();
  if (!unfinished.empty())
    spdlog::info("resuming {} unfinished job(s) from the store", unfinished.size());
  for (std::int64_t id : unfinished) enqueue(id);
}

void JobScheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!started_) return;
    stopping_ = true;
  }
  for (auto& lane : lanes_) lane->wake.notify_all();
  for (auto& lane : lanes_)
    if (lane->thread.joinable()) lane->thread.join();
  std::lock_guard lock(mutex_);
  started_ = false;
}

bool JobScheduler::is_stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

JobScheduler::Lane* JobScheduler::lane_for(const JobRecord& job) {
  if (job.mode == "compile") return lanes_.front().get();
  for (auto& lane : lanes_)
    if (lane->device != nullptr && lane->device->uuid == job.device_uuid) return lane.get();
  return nullptr;
}

void JobScheduler::enqueue(std::int64_t job_id) {
  const auto job = store_.job(job_id);
  if (!job) return;
  Lane* lane = lane_for(*job);
  if (lane == nullptr) {
    store_.set_job_status(
        job_id, JobStatus::failed,
        "device " + job->device_name + " (" + job->device_uuid + ") is not present on this host");
    return;
  }
  {
    std::lock_guard lock(mutex_);
    lane->queue.push_back(job_id);
  }
  lane->wake.notify_one();
}

bool JobScheduler::cancel(std::int64_t job_id) {
  return store_.request_cancel(job_id);
}

void JobScheduler::run_lane(Lane& lane) {
  for (;;) {
    std::int64_t job_id = 0;
    {
      std::unique_lock lock(mutex_);
      lane.wake.wait(lock, [&] { return stopping_ || !lane.queue.empty(); });
      if (stopping_) return;
      job_id = lane.queue.front();
      lane.queue.pop_front();
    }
    JobRunContext ctx{store_,      families_,         options_, *compile_pool_,
                      lane.device, lane.worker.get(), seed_,    [this] { return is_stopping(); }};
    run_job(job_id, ctx);
  }
}

}  // namespace kt
