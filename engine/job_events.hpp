// Live progress of jobs, for the event streams (GET /v1/jobs/{id}/events). The engine says that a
// job changed (touch: no query, callable from any engine thread, a compile or a GPU lane); one
// publisher thread reads each changed job from the store at most once per interval and hands the
// snapshot to the job's subscribers. The coalescing means a sweep of thousands of cache hits
// costs a few queries a second, and no thread that compiles or measures waits on one; a
// subscriber gets the latest state, never a backlog.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "db/model.hpp"
#include "db/store.hpp"

namespace kt {

// What a job looks like at one moment, as its events tell it.
struct JobSnapshot {
  JobRecord job;
  JobProgress progress;
  // The job's best: the winner of its final comparison once there is one, else the fastest
  // first-pass median so far.
  std::optional<VariantRecord> best;
};

// done, failed or cancelled: nothing changes after.
bool is_finished(JobStatus status);

// The job's snapshot from the store; nullopt when there is no such job.
std::optional<JobSnapshot> read_job_snapshot(Store& store, std::int64_t job_id);

class JobEventHub {
 public:
  using Snapshot = std::shared_ptr<const JobSnapshot>;
  // Called on the publisher thread with every new snapshot of the job: must not block (post the
  // snapshot somewhere and return). It may still be called once after its Subscription is gone.
  using Listener = std::function<void(const Snapshot&)>;

  // Unsubscribes when destroyed. Move-only.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(JobEventHub* hub, std::int64_t job_id, std::uint64_t id)
        : hub_(hub), job_id_(job_id), id_(id) {}
    Subscription(Subscription&& other) noexcept { *this = std::move(other); }
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }
    void reset();

   private:
    JobEventHub* hub_ = nullptr;
    std::int64_t job_id_ = 0;
    std::uint64_t id_ = 0;
  };

  // Finished jobs whose last snapshot is kept (for a stream opened just as its job ends).
  static constexpr std::size_t kFinishedKept = 256;

  JobEventHub(Store& store, std::chrono::milliseconds interval);
  ~JobEventHub();  // stop()
  JobEventHub(const JobEventHub&) = delete;
  JobEventHub& operator=(const JobEventHub&) = delete;

  void start();
  // Joins the publisher; changes not yet published are dropped.
  void stop();
  // The job changed (status, a variant's outcome, a cancel request): its subscribers get a new
  // snapshot within the interval.
  void touch(std::int64_t job_id);
  // Registers the listener for the job's next snapshots and returns the latest one published
  // (null when none was since the daemon started), both under one lock: no snapshot falls
  // between the two.
  Subscription subscribe(std::int64_t job_id, Listener listener, Snapshot* latest);
  std::size_t subscriber_count() const;

 private:
  struct Entry {
    Snapshot latest;
    std::map<std::uint64_t, Listener> listeners;
  };
  void unsubscribe(std::int64_t job_id, std::uint64_t id);
  void run();
  void publish(std::int64_t job_id);
  void forget_if_unused(std::int64_t job_id);  // with mutex_ held

  Store& store_;
  const std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::int64_t, Entry> entries_;
  std::set<std::int64_t> changed_;
  std::deque<std::int64_t> finished_;  // jobs whose last snapshot is kept, oldest first
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread publisher_;
};

}  // namespace kt
