// GpuPool's lanes with stand-in devices: the tasks here never touch the worker, so no GPU (and no
// worker process) is needed to check how work spreads, waits and stops.
#include "engine/gpu_pool.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "support/eventually.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

std::vector<DeviceInfo> fake_devices(int count) {
  std::vector<DeviceInfo> devices(count);
  for (int i = 0; i < count; ++i) {
    devices[i].ordinal = i;
    devices[i].name = "Fake GPU";
    devices[i].arch = "sm_90a";
    devices[i].uuid = "GPU-fake-" + std::to_string(i);
  }
  return devices;
}

TEST(GpuPool, OneJobSpreadsOverEveryLaneAndWaitBelowBoundsIt) {
  GpuPool pool(fake_devices(2), "/nonexistent/kerntune-worker");
  pool.start();
  pool.open(1, {0, 1});
  std::mutex mutex;
  std::set<int> ordinals;
  std::atomic<int> running{0}, most{0}, done{0};
  for (int i = 0; i < 8; ++i) {
    pool.wait_below(1, 2);  // at most two outstanding, as a job with depth 2 keeps it
    EXPECT_LT(pool.outstanding(1), 2u);
    pool.post(1, [&](WorkerClient&, const DeviceInfo& device) {
      const int now = ++running;
      most = std::max(most.load(), now);
      std::this_thread::sleep_for(20ms);
      {
        std::lock_guard lock(mutex);
        ordinals.insert(device.ordinal);
      }
      --running;
      ++done;
    });
  }
  pool.wait_below(1, 1);
  EXPECT_EQ(done, 8);
  EXPECT_EQ(pool.outstanding(1), 0u);
  EXPECT_EQ(ordinals, (std::set<int>{0, 1}));
  EXPECT_EQ(most, 2);  // both GPUs busy at once
  pool.close(1);
  pool.stop();
}

TEST(GpuPool, PinnedTasksRunOnTheirGpuAndAThrowingTaskDoesNotStopTheLane) {
  GpuPool pool(fake_devices(2), "/nonexistent/kerntune-worker");
  pool.start();
  pool.open(7, {0, 1});
  std::promise<int> where;
  pool.post(
      7, [](WorkerClient&, const DeviceInfo&) { throw std::runtime_error("planted"); }, 1);
  pool.post(
      7, [&](WorkerClient&, const DeviceInfo& d) { where.set_value(d.ordinal); }, 1);
  auto future = where.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), 1);
  pool.wait_below(7, 1);
  pool.close(7);
}

TEST(GpuPool, DroppedAndStoppedWorkNeverRunsAndReleasesWaiters) {
  GpuPool pool(fake_devices(1), "/nonexistent/kerntune-worker");
  pool.start();
  pool.open(1, {0});
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> ran{0};
  std::atomic<bool> first_running{false};
  pool.post(1, [&, gate](WorkerClient&, const DeviceInfo&) {
    first_running = true;
    gate.wait();
    ++ran;
  });
  for (int i = 0; i < 5; ++i) pool.post(1, [&](WorkerClient&, const DeviceInfo&) { ++ran; });
  EXPECT_TRUE(test::eventually([&] { return first_running.load(); }));  // five are queued
  EXPECT_EQ(pool.outstanding(1), 6u);
  pool.drop_queued(1);
  EXPECT_EQ(pool.outstanding(1), 1u);  // the running one still counts
  std::thread waiter([&] { pool.wait_below(1, 1); });
  release.set_value();
  waiter.join();
  EXPECT_EQ(ran, 1);

  pool.post(1, [&](WorkerClient&, const DeviceInfo&) { ++ran; });
  pool.stop();
  pool.post(1, [&](WorkerClient&, const DeviceInfo&) { ++ran; });  // after stop: dropped
  pool.wait_below(1, 1);  // returns: nothing can run any more
  EXPECT_LE(ran, 2);
  pool.close(1);
}

TEST(GpuPool, DeviceLookupByOrdinal) {
  GpuPool pool(fake_devices(2), "/nonexistent/kerntune-worker");
  ASSERT_NE(pool.device(1), nullptr);
  EXPECT_EQ(pool.device(1)->uuid, "GPU-fake-1");
  EXPECT_EQ(pool.device(5), nullptr);
}

}  // namespace
}  // namespace kt
