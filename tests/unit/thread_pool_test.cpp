#include "tuner/thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <set>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(ThreadPool, RunsEveryTaskAndReturnsItsValue) {
  ThreadPool pool(3);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 50; ++i) results.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(results[i].get(), i * i);
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

TEST(ThreadPool, NiceThreadsRunAtALowerPriorityAndLeaveTheCallersAlone) {
  const int base = getpriority(PRIO_PROCESS, 0);
  auto thread_priority = [] { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); };
  ThreadPool nice_pool(2, 7);
  EXPECT_EQ(nice_pool.submit(thread_priority).get(), std::min(19, base + 7));
  ThreadPool plain_pool(1);
  EXPECT_EQ(plain_pool.submit(thread_priority).get(), base);
  EXPECT_EQ(thread_priority(), base);
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), base);
}

TEST(ThreadPool, IdleThreadsRunUnderSchedIdleAndLeaveTheCallersAlone) {
  auto policy = [] { return sched_getscheduler(0); };  // 0: the calling thread
  ThreadPool idle_pool(1, kIdleNice);
  EXPECT_EQ(idle_pool.submit(policy).get(), SCHED_IDLE);
  EXPECT_EQ(policy(), SCHED_OTHER);
  ThreadPool nice_pool(1, 19);
  EXPECT_EQ(nice_pool.submit(policy).get(), SCHED_OTHER);
}

}  // namespace
}  // namespace kt
