#include "engine/thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <set>

#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(ThreadPool, RunsEveryTaskAndReturnsItsValue) {
  ThreadPool pool(3);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 50; ++i) results.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(results[i].get(), i * i);
}

TEST(ThreadPool, TasksRunBelowTheCallersPriority) {
  // The pool compiles; the daemon's HTTP threads (nice 0, like this one) must win the CPU.
  ThreadPool pool(2);
  const int caller = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  const int task =
      pool.submit([] { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }).get();
  EXPECT_GE(task, 10);
  EXPECT_GE(task, caller);
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())), caller);  // unchanged here
}

TEST(ThreadPool, RunsTasksConcurrently) {
  ThreadPool pool(4);
  std::atomic<int> running{0}, peak{0};
  std::vector<std::future<void>> done;
  for (int i = 0; i < 8; ++i)
    done.push_back(pool.submit([&] {
      const int now = ++running;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      --running;
    }));
  for (auto& f : done) f.get();
  EXPECT_GE(peak.load(), 2);
  EXPECT_LE(peak.load(), 4);
}

TEST(ThreadPool, PropagatesExceptionsThroughTheFuture) {
  ThreadPool pool(1);
  auto f = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(f.get(), std::runtime_error);
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);  // the pool survives
}

TEST(ThreadPool, DestructorFinishesQueuedTasks) {
  std::atomic<int> count{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 20; ++i) pool.submit([&] { ++count; });
  }
  EXPECT_EQ(count.load(), 20);
}

}  // namespace
}  // namespace kt
