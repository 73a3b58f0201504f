#include "engine/job_events.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace kt {

bool is_finished(JobStatus status) {
  return status == JobStatus::done || status == JobStatus::failed || status == JobStatus::cancelled;
}

std::optional<JobSnapshot> read_job_snapshot(Store& store, std::int64_t job_id) {
  auto job = store.job(job_id);
  if (!job) return std::nullopt;
  JobSnapshot snapshot;
  snapshot.progress = store.progress(job_id);
  if (job->final_comparison)
    snapshot.best = store.variant(job->final_comparison->winner_variant_id);
  if (!snapshot.best) snapshot.best = store.fastest_variant(job_id);
  snapshot.job = std::move(*job);
  return snapshot;
}

JobEventHub::Subscription& JobEventHub::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    hub_ = std::exchange(other.hub_, nullptr);
    job_id_ = other.job_id_;
    id_ = other.id_;
  }
  return *this;
}

void JobEventHub::Subscription::reset() {
  if (hub_) hub_->unsubscribe(job_id_, id_);
  hub_ = nullptr;
}

JobEventHub::JobEventHub(Store& store, std::chrono::milliseconds interval)
    : store_(store), interval_(interval) {}

JobEventHub::~JobEventHub() {
  stop();
}

void JobEventHub::start() {
  std::lock_guard lock(mutex_);
  if (publisher_.joinable()) return;
  stopping_ = false;
  publisher_ = std::thread([this] { run(); });
}

void JobEventHub::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (publisher_.joinable()) publisher_.join();
}

void JobEventHub::touch(std::int64_t job_id) {
  {
    std::lock_guard lock(mutex_);
    if (!changed_.insert(job_id).second) return;
  }
  wake_.notify_one();
}

JobEventHub::Subscription JobEventHub::subscribe(std::int64_t job_id, Listener listener,
                                                 Snapshot* latest) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[job_id];
  const std::uint64_t id = next_id_++;
  entry.listeners.emplace(id, std::move(listener));
  if (latest) *latest = entry.latest;
  return Subscription(this, job_id, id);
}

std::size_t JobEventHub::subscriber_count() const {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (const auto& [job_id, entry] : entries_) count += entry.listeners.size();
  return count;
}

void JobEventHub::unsubscribe(std::int64_t job_id, std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const auto it = entries_.find(job_id);
  if (it == entries_.end()) return;
  it->second.listeners.erase(id);
  forget_if_unused(job_id);
}

void JobEventHub::forget_if_unused(std::int64_t job_id) {
  const auto it = entries_.find(job_id);
  if (it == entries_.end() || !it->second.listeners.empty()) return;
  // A running job keeps its latest snapshot (a new stream starts from it); a finished one only
  // while it is among the last kFinishedKept.
  const Snapshot& latest = it->second.latest;
  const bool kept =
      latest && (!is_finished(latest->job.status) ||
                 std::find(finished_.begin(), finished_.end(), job_id) != finished_.end());
  if (!kept) entries_.erase(it);
}

void JobEventHub::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !changed_.empty(); });
    if (stopping_) return;
    const std::set<std::int64_t> jobs = std::exchange(changed_, {});
    lock.unlock();
    for (std::int64_t job_id : jobs) publish(job_id);
    lock.lock();
    // The coalescing: touches during this pause become one snapshot per job after it.
    wake_.wait_for(lock, interval_, [&] { return stopping_; });
  }
}

void JobEventHub::publish(std::int64_t job_id) {
  Snapshot snapshot;
  try {
    // Without the hub's lock: a slow query delays the snapshots, never a subscriber.
    if (auto read = read_job_snapshot(store_, job_id))
      snapshot = std::make_shared<const JobSnapshot>(std::move(*read));
  } catch (const std::exception& error) {
    spdlog::warn("job {}: reading its progress for the event streams failed: {}", job_id,
                 error.what());
  }
  if (!snapshot) return;
  std::vector<Listener> listeners;
  {
    std::lock_guard lock(mutex_);
    Entry& entry = entries_[job_id];
    entry.latest = snapshot;
    for (const auto& [id, listener] : entry.listeners) listeners.push_back(listener);
    if (is_finished(snapshot->job.status) &&
        std::find(finished_.begin(), finished_.end(), job_id) == finished_.end()) {
      finished_.push_back(job_id);
      if (finished_.size() > kFinishedKept) {
        const std::int64_t oldest = finished_.front();
        finished_.pop_front();
        forget_if_unused(oldest);
      }
    }
  }
  for (const Listener& listener : listeners) {
    try {
      listener(snapshot);
    } catch (const std::exception& error) {
      spdlog::warn("job {}: an event listener failed: {}", job_id, error.what());
    }
  }
}

}  // namespace kt
