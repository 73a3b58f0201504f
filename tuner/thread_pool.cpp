#include "tuner/thread_pool.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace kt {

ThreadPool::ThreadPool(unsigned threads, int nice) {
  if (threads == 0) threads = 1;
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this, nice] { work(nice); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ThreadPool::work(int nice) {
  if (nice >= kIdleNice) {
    // Any thread may lower itself to SCHED_IDLE without privileges (sched(7)).
    sched_param param{};
    if (sched_setscheduler(gettid(), SCHED_IDLE, &param) != 0)
      spdlog::warn("thread pool: could not move a thread to SCHED_IDLE: {}", std::strerror(errno));
  } else if (nice > 0) {
    // On Linux a thread id names one thread to setpriority; the new value is relative to the
    // process's own, which the thread inherited.
    const int base = getpriority(PRIO_PROCESS, 0);
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), base + nice) != 0)
      spdlog::warn("thread pool: could not lower a thread's priority by {}: {}", nice,
                   std::strerror(errno));
  }
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace kt
