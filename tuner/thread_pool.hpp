// A fixed set of threads running queued tasks: the engine compiles variants ahead of the GPU on
// one, the shape predictor ranks thousands of candidates on another.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kt {

// A nice level past the last one (19): the threads run under SCHED_IDLE, so they get only CPU
// time no other thread wants, and a thread that wakes up takes their core at once.
inline constexpr int kIdleNice = 20;

class ThreadPool {
 public:
  // nice > 0 lowers the threads' scheduling priority (Linux: per thread), so that under
  // contention they yield the cores to threads at the process's own priority; kIdleNice runs
  // them under SCHED_IDLE.
  explicit ThreadPool(unsigned threads, int nice = 0);
  ~ThreadPool();  // finishes queued tasks, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <class F>
  auto submit(F task) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto packaged = std::make_shared<std::packaged_task<R()>>(std::move(task));
    auto result = packaged->get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([packaged] { (*packaged)(); });
    }
    wake_.notify_one();
    return result;
  }

  unsigned size() const { return static_cast<unsigned>(threads_.size()); }

 private:
  void work(int nice);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  bool closing_ = false;
};

}  // namespace kt
