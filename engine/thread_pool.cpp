#include "engine/thread_pool.hpp"

#include <sys/resource.h>
#include <unistd.h>

namespace kt {
namespace {

// Compiling is batch work: its threads run below the daemon's HTTP threads, so a job's NVRTC
// calls do not take the cores the API's answers need (on 2 cores, two compile threads at the
// same priority share them as equals with the I/O and query threads). Linux keeps a nice value
// per thread; when it cannot be raised the thread keeps the default, which only costs latency.
constexpr int kCompileNice = 10;

void lower_this_threads_priority() {
  const id_t thread = static_cast<id_t>(gettid());
  const int current = getpriority(PRIO_PROCESS, thread);
  if (current < kCompileNice) setpriority(PRIO_PROCESS, thread, kCompileNice);
}

}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = 1;
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ThreadPool::work() {
  lower_this_threads_priority();
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
