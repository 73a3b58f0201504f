#include "engine/gpu_task_queue.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/worker_client.hpp"

namespace kt {
namespace {

// Tasks that say which job and which of its tasks ran: "job.index".
struct Recorder {
  std::vector<std::string> ran;
  GpuTask task(std::int64_t job, int index) {
    return [this, job, index](WorkerClient&, const DeviceInfo&) {
      ran.push_back(std::to_string(job) + "." + std::to_string(index));
    };
  }
};

// Runs what pop_for hands out; the tasks here never use the worker, which never starts.
std::string run_next(GpuTaskQueue& queue, int ordinal) {
  auto picked = queue.pop_for(ordinal);
  if (!picked) return "-";
  WorkerClient worker("/nonexistent/kerntune-worker", ordinal);
  DeviceInfo device;
  device.ordinal = ordinal;
  picked->task(worker, device);
  return std::to_string(picked->job_id);
}

TEST(GpuTaskQueue, AJobAloneIsServedByEveryGpuOfItsModel) {
  Recorder rec;
  GpuTaskQueue queue;
  queue.open(1, {0, 1});
  for (int i = 0; i < 4; ++i) queue.push(1, rec.task(1, i));
  EXPECT_EQ(run_next(queue, 0), "1");
  EXPECT_EQ(run_next(queue, 1), "1");
  EXPECT_EQ(run_next(queue, 1), "1");
  EXPECT_EQ(run_next(queue, 0), "1");
  EXPECT_EQ(run_next(queue, 0), "-");
  // Within a job, tasks start in the order they were posted, whichever GPU takes them.
  EXPECT_EQ(rec.ran, (std::vector<std::string>{"1.0", "1.1", "1.2", "1.3"}));
}

TEST(GpuTaskQueue, JobsSharingGpusAreServedInTurn) {
  Recorder rec;
  GpuTaskQueue queue;
  queue.open(1, {0, 1});
  queue.open(2, {0, 1});
  for (int i = 0; i < 3; ++i) queue.push(1, rec.task(1, i));
  for (int i = 0; i < 3; ++i) queue.push(2, rec.task(2, i));
  std::string order;
  for (int k = 0; k < 6; ++k) order += run_next(queue, k % 2);
  EXPECT_EQ(order, "121212");
  // A job that posts later than the other still gets its turn at once.
  queue.push(1, rec.task(1, 3));
  queue.push(1, rec.task(1, 4));
  queue.push(2, rec.task(2, 3));
  EXPECT_EQ(run_next(queue, 0) + run_next(queue, 0) + run_next(queue, 0), "121");
}

TEST(GpuTaskQueue, AGpuOnlyServesJobsOfItsModel) {
  Recorder rec;
  GpuTaskQueue queue;
  queue.open(1, {0, 1});  // two H100
  queue.open(2, {2});     // the host's other model
  queue.push(1, rec.task(1, 0));
  queue.push(2, rec.task(2, 0));
  EXPECT_EQ(run_next(queue, 2), "2");
  EXPECT_EQ(run_next(queue, 2), "-");
  EXPECT_EQ(run_next(queue, 1), "1");
}

TEST(GpuTaskQueue, PinnedTasksWaitForTheirGpuWhileOthersPassOver) {
  Recorder rec;
  GpuTaskQueue queue;
  queue.open(1, {0, 1});
  queue.push(1, rec.task(1, 0), 1);  // only GPU 1
  queue.push(1, rec.task(1, 1));
  EXPECT_EQ(run_next(queue, 0), "1");  // takes the unpinned one behind it
  EXPECT_EQ(run_next(queue, 0), "-");
  EXPECT_EQ(run_next(queue, 1), "1");
  EXPECT_EQ(rec.ran, (std::vector<std::string>{"1.1", "1.0"}));
}

TEST(GpuTaskQueue, DropAndCloseForgetQueuedTasks) {
  Recorder rec;
  GpuTaskQueue queue;
  queue.open(1, {0});
  queue.open(2, {0});
  queue.open(3, {0});
  for (int i = 0; i < 3; ++i) queue.push(1, rec.task(1, i));
  queue.push(2, rec.task(2, 0));
  queue.push(3, rec.task(3, 0));
  EXPECT_EQ(queue.queued(), 5u);
  EXPECT_EQ(queue.drop(1), 3u);
  EXPECT_EQ(queue.queued(1), 0u);
  EXPECT_EQ(run_next(queue, 0), "2");
  EXPECT_EQ(queue.close(2), 0u);
  EXPECT_EQ(run_next(queue, 0), "3");
  EXPECT_EQ(queue.close(3), 0u);
  EXPECT_EQ(queue.close(42), 0u);
  EXPECT_THROW(queue.push(3, rec.task(3, 1)), std::invalid_argument);
  EXPECT_EQ(run_next(queue, 0), "-");
  EXPECT_EQ(rec.ran, (std::vector<std::string>{"2.0", "3.0"}));
}

TEST(GpuTaskQueue, ClosingAJobKeepsTheTurnOfTheOthers) {
  Recorder rec;
  GpuTaskQueue queue;
  for (std::int64_t job = 1; job <= 3; ++job) {
    queue.open(job, {0});
    for (int i = 0; i < 2; ++i) queue.push(job, rec.task(job, i));
  }
  EXPECT_EQ(run_next(queue, 0), "1");
  EXPECT_EQ(run_next(queue, 0), "2");
  queue.close(1);  // job 3 is next in turn, not job 2 again
  EXPECT_EQ(run_next(queue, 0), "3");
  EXPECT_EQ(run_next(queue, 0), "2");
}

TEST(SameModelOrdinals, GroupsByNameAndArch) {
  std::vector<DeviceInfo> devices(4);
  const char* names[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA H200"};
  for (int i = 0; i < 4; ++i) {
    devices[i].ordinal = i;
    devices[i].name = names[i];
    devices[i].arch = "sm_90a";
  }
  devices[3].arch = "sm_90";  // same name, other arch: another model for our purposes
  EXPECT_EQ(same_model_ordinals(devices, devices[2]), (std::vector<int>{0, 2}));
  EXPECT_EQ(same_model_ordinals(devices, devices[1]), (std::vector<int>{1}));
  EXPECT_EQ(same_model_ordinals(devices, devices[3]), (std::vector<int>{3}));
}

}  // namespace
}  // namespace kt
