#include "engine/job_scheduler.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "engine/batch_submission.hpp"

namespace kt {

struct JobScheduler::Queue {
  struct Waiting {
    std::int64_t job_id = 0;
    JobTarget target;
    std::vector<int> ordinals;  // the job's own GPU first, then the rest of its model
  };
  std::string model;  // "" for compile-only
  std::string arch;
  // Jobs past planning at once. One thread more than that runs: a job planning a large space
  // holds no place, so the next job starts meanwhile instead of waiting out its planning.
  std::size_t runners = 1;
  std::size_t placed = 0;  // jobs holding a place now
  std::deque<Waiting> waiting;
  std::condition_variable wake;
  std::condition_variable place_freed;
  std::vector<std::thread> threads;
};

JobScheduler::JobScheduler(Store& store, const FamilyRegistry& families, SchedulerOptions options,
                           std::vector<DeviceInfo> devices)
    : store_(store),
      families_(families),
      options_(std::move(options)),
      devices_(std::move(devices)),
      events_(store, options_.event_interval) {
  unsigned threads = options_.compile_threads > 0
                         ? static_cast<unsigned>(options_.compile_threads)
                         : std::max(1u, std::thread::hardware_concurrency());
  compile_threads_ = static_cast<int>(threads);
  compile_pool_ = std::make_unique<ThreadPool>(threads, options_.compile_nice);
  gpu_pool_ = std::make_unique<GpuPool>(devices_, options_.worker_exe, options_.run_as);
  seed_ = options_.seed != 0 ? options_.seed : (std::random_device{}() | 1ull);
  queues_.push_back(std::make_unique<Queue>());
  for (const DeviceInfo& device : devices_) {
    const bool known = std::any_of(queues_.begin() + 1, queues_.end(), [&](const auto& queue) {
      return queue->model == device.name && queue->arch == device.arch;
    });
    if (known) continue;
    auto queue = std::make_unique<Queue>();
    queue->model = device.name;
    queue->arch = device.arch;
    // One running job per GPU of the model: a job alone gets every GPU, and as many jobs as
    // there are GPUs share them, so no job waits behind a long one while a GPU could serve it.
    queue->runners = same_model_ordinals(devices_, device).size();
    queues_.push_back(std::move(queue));
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
  store_.wait_again();  // the engine's store work waits out an outage of the database
  gpu_pool_->start();
  events_.start();
  for (auto& queue : queues_) {
    Queue* raw = queue.get();
    for (std::size_t i = 0; i < queue->runners + 1; ++i)
      queue->threads.emplace_back([this, raw] { run_queue(*raw); });
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const DeviceInfo& device : devices_)
    gpus.push_back({{"ordinal", device.ordinal},
                    {"name", device.name},
                    {"uuid", device.uuid},
                    {"arch", device.arch}});
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  const std::int64_t daemon =
      store_.register_daemon(host, static_cast<int>(getpid()), gpus.dump(), options_.lease.count());
  spdlog::info("daemon {} on {}: leases of {} ms, heartbeat every {} ms", daemon, host,
               options_.lease.count(), options_.heartbeat.count());
  const auto unfinished = store_.unfinished_jobs();
  if (!unfinished.empty())
    spdlog::info("resuming {} unfinished job(s) from the store", unfinished.size());
  for (std::int64_t id : unfinished) resume(id);
  heartbeat_ = std::thread([this] { keep_leases(); });
}

void JobScheduler::keep_leases() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    heartbeat_wake_.wait_for(lock, options_.heartbeat, [&] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    try {
      store_.heartbeat();
      const LeaseExpiry expiry = store_.expire_leases();
      if (expiry.returned + expiry.faulted > 0)
        spdlog::warn(
            "leases of a lost daemon expired: {} variants planned again ({} of them claimed but "
            "not begun, not counted), {} recorded as faults (expiry {} of begun work, under {}+ "
            "daemons)",
            expiry.returned, expiry.unstarted, expiry.faulted, kLeaseExpiriesToFault,
            kLeaseOwnersToFault);
      take_up_unfinished_jobs();
      cancel_batches_past_deadline(store_, *this);
    } catch (const std::exception& e) {
      spdlog::warn("heartbeat: {}", e.what());
    }
    lock.lock();
  }
}

void JobScheduler::take_up_unfinished_jobs() {
  const std::vector<std::int64_t> unfinished = store_.unfinished_jobs();
  if (store_.shared()) {
    // Other daemons' progress reaches this one's event streams through the store: every job
    // unfinished now, or at the last heartbeat (its final state), is read again.
    std::set<std::int64_t> now(unfinished.begin(), unfinished.end());
    for (const std::int64_t id : now) events_.touch(id);
    for (const std::int64_t id : watched_)
      if (now.count(id) == 0) events_.touch(id);
    watched_ = std::move(now);
  }
  for (const std::int64_t id : unfinished) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (active_.count(id) != 0 || left_to_others_.count(id) != 0) continue;
    }
    spdlog::info("job {}: unfinished, queued by another daemon; taking up its variants", id);
    resume(id);
  }
}

void JobScheduler::resume(std::int64_t job_id) {
  const auto job = store_.job(job_id);
  if (!job) return;
  try {
    enqueue(*job, resolve_target(target_spec_of(*job), devices_));
  } catch (const TargetError& error) {
    if (store_.shared()) {
      // Another daemon of the fleet may have the GPU; this one leaves the job alone.
      std::lock_guard lock(mutex_);
      if (left_to_others_.insert(job_id).second)
        spdlog::info("job {}: left to other daemons: {}", job_id, error.what());
      return;
    }
    const std::string reason = job->mode == JobMode::compile
                                   ? error.what()
                                   : "device " + job->device_name + " (" + job->device_uuid +
                                         ") is not present on this host";
    store_.set_job_status(job_id, JobStatus::failed, reason);
    metrics_.job_ended(JobStatus::failed);
    events_.touch(job_id);
  }
}

void JobScheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!started_) return;
    stopping_ = true;
  }
  // Work waiting for an unreachable database gives up: the job pauses, its leases expire.
  store_.give_up_waiting();
  for (auto& queue : queues_) {
    queue->wake.notify_all();
    queue->place_freed.notify_all();
  }
  heartbeat_wake_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  // Runners first: a job winding down still waits for its running GPU task, which needs a lane.
  for (auto& queue : queues_) {
    for (auto& thread : queue->threads)
      if (thread.joinable()) thread.join();
    queue->threads.clear();
  }
  gpu_pool_->stop();
  events_.stop();
  try {
    store_.release_leases();  // nothing runs now: what was claimed goes back for anyone
  } catch (const std::exception& e) {
    spdlog::warn("releasing this daemon's leases: {} (they expire instead)", e.what());
  }
  std::lock_guard lock(mutex_);
  active_.clear();
  started_ = false;
}

bool JobScheduler::is_stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

JobScheduler::Queue* JobScheduler::queue_for(const JobTarget& target, std::vector<int>* ordinals) {
  if (!target.device) return queues_.front().get();
  const DeviceInfo& device = *target.device;
  std::vector<int> model = same_model_ordinals(devices_, device);
  std::rotate(model.begin(), std::find(model.begin(), model.end(), device.ordinal), model.end());
  *ordinals = std::move(model);
  for (auto& queue : queues_)
    if (queue->model == device.name && queue->arch == device.arch) return queue.get();
  return nullptr;
}

void JobScheduler::enqueue(const JobRecord& job, JobTarget target) {
  std::vector<int> ordinals;
  Queue* queue = queue_for(target, &ordinals);
  if (queue == nullptr) {
    store_.set_job_status(
        job.id, JobStatus::failed,
        "device " + job.device_name + " (" + job.device_uuid + ") is not present on this host");
    metrics_.job_ended(JobStatus::failed);
    events_.touch(job.id);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (!active_.insert(job.id).second) return;  // already queued or running here
    queue->waiting.push_back({job.id, std::move(target), std::move(ordinals)});
    metrics_.job_queued();
  }
  queue->wake.notify_one();
  events_.touch(job.id);
}

bool JobScheduler::cancel(std::int64_t job_id) {
  const bool requested = store_.request_cancel(job_id);
  if (requested) events_.touch(job_id);
  return requested;
}

void JobScheduler::run_queue(Queue& queue) {
  for (;;) {
    Queue::Waiting next;
    {
      std::unique_lock lock(mutex_);
      queue.wake.wait(lock, [&] { return stopping_ || !queue.waiting.empty(); });
      if (stopping_) return;
      next = std::move(queue.waiting.front());
      queue.waiting.pop_front();
      metrics_.job_started();
    }
    JobRunContext ctx{store_,
                      families_,
                      options_,
                      *compile_pool_,
                      queue.model.empty() ? nullptr : gpu_pool_.get(),
                      std::move(next.target),
                      std::move(next.ordinals),
                      seed_,
                      [this] { return is_stopping(); },
                      &metrics_,
                      &events_,
                      /*take_place=*/{}};
    bool placed = false;
    ctx.take_place = [this, &queue, &placed] {
      std::unique_lock lock(mutex_);
      queue.place_freed.wait_for(lock, std::chrono::milliseconds(100),
                                 [&] { return stopping_ || queue.placed < queue.runners; });
      if (stopping_ || queue.placed >= queue.runners) return false;
      ++queue.placed;
      placed = true;
      return true;
    };
    run_job(next.job_id, ctx);
    if (placed) {
      std::lock_guard lock(mutex_);
      --queue.placed;
    }
    queue.place_freed.notify_one();
    events_.touch(next.job_id);  // its last state: done, failed, cancelled (or paused)
    // Counted here, where every way a runner ends meets (a job paused for shutdown is not).
    {
      std::lock_guard lock(mutex_);
      active_.erase(next.job_id);
    }
    const auto ended = store_.job(next.job_id);
    if (ended && (ended->status == JobStatus::done || ended->status == JobStatus::failed ||
                  ended->status == JobStatus::cancelled))
      metrics_.job_ended(ended->status);
    metrics_.job_stopped();
  }
}

std::vector<prometheus::MetricFamily> JobScheduler::metric_families() const {
  return metrics_.collect(worker_restarts());
}

std::uint64_t JobScheduler::worker_restarts() const {
  return gpu_pool_ ? gpu_pool_->worker_restarts() : 0;
}

}  // namespace kt
