// JobEventHub on a real SQLite store: touches coalesce into one snapshot per interval, a
// subscriber gets the latest state (the store's, read on the publisher thread), subscribe hands
// back what was published before, and an unsubscribed listener hears nothing more.
#include "engine/job_events.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

class JobEventHubTest : public test::StoreFixture {
 protected:
  // Waits until pred() holds (true) or two seconds passed (false).
  template <typename Pred>
  static bool eventually(Pred pred) {
    for (int i = 0; i < 200; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return pred();
  }
};

struct Heard {
  std::mutex mutex;
  std::vector<JobEventHub::Snapshot> snapshots;
  void add(const JobEventHub::Snapshot& s) {
    std::lock_guard lock(mutex);
    snapshots.push_back(s);
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return snapshots.size();
  }
  JobEventHub::Snapshot last() {
    std::lock_guard lock(mutex);
    return snapshots.empty() ? nullptr : snapshots.back();
  }
};

TEST_F(JobEventHubTest, TouchesCoalesceAndSubscribersGetTheStoresLatestState) {
  Store store(db_path());
  const std::int64_t id = store.create_job(test::tune_job());
  const auto variants = plan(store, id, 4);
  JobEventHub hub(store, 600ms);
  hub.start();
  Heard heard;
  JobEventHub::Snapshot before;
  auto subscription = hub.subscribe(
      id, [&](const JobEventHub::Snapshot& s) { heard.add(s); }, &before);
  EXPECT_FALSE(before) << "nothing was published yet";

  store.set_job_status(id, JobStatus::running);
  hub.touch(id);
  ASSERT_TRUE(eventually([&] { return heard.count() == 1; }));
  EXPECT_EQ(heard.last()->job.status, JobStatus::running);
  EXPECT_EQ(heard.last()->progress.total, 4);
  EXPECT_EQ(heard.last()->progress.finished, 0);

  // Three variants measured, each touched, within the pause after the first snapshot: one
  // snapshot after the interval, with all three.
  for (int i = 0; i < 3; ++i) store.record_outcome(variants[i].id, test::measured(100.0 - i, 1e-3));
  for (int i = 0; i < 3; ++i) hub.touch(id);
  ASSERT_TRUE(eventually([&] { return heard.count() >= 2; }));
  std::this_thread::sleep_for(700ms);  // past another interval: nothing more was touched
  EXPECT_EQ(heard.count(), 2u);
  EXPECT_EQ(heard.last()->progress.finished, 3);
  EXPECT_EQ(heard.last()->progress.by_status.at("measured"), 3);
  ASSERT_TRUE(heard.last()->best);
  EXPECT_EQ(heard.last()->best->id, variants[2].id);  // the fastest so far

  // A later subscriber starts from the latest snapshot.
  JobEventHub::Snapshot latest;
  auto second = hub.subscribe(
      id, [](const JobEventHub::Snapshot&) {}, &latest);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->progress.finished, 3);
  EXPECT_EQ(hub.subscriber_count(), 2u);

  // Unsubscribed: the last state of the job goes to nobody.
  subscription.reset();
  second.reset();
  EXPECT_EQ(hub.subscriber_count(), 0u);
  store.set_job_status(id, JobStatus::done);
  hub.touch(id);
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(heard.count(), 2u);
  // The finished job's snapshot is kept for a stream that opens just after it ended.
  JobEventHub::Snapshot final_state;
  auto third = hub.subscribe(
      id, [](const JobEventHub::Snapshot&) {}, &final_state);
  ASSERT_TRUE(final_state);
  EXPECT_EQ(final_state->job.status, JobStatus::done);
  hub.stop();
}

TEST_F(JobEventHubTest, UnknownJobPublishesNothingAndSnapshotReadIsEmpty) {
  Store store(db_path());
  EXPECT_FALSE(read_job_snapshot(store, 42));
  JobEventHub hub(store, 10ms);
  hub.start();
  Heard heard;
  auto subscription = hub.subscribe(
      42, [&](const JobEventHub::Snapshot& s) { heard.add(s); }, nullptr);
  hub.touch(42);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(heard.count(), 0u);
}

TEST(JobFinished, OnlyDoneFailedAndCancelledAreFinal) {
  EXPECT_FALSE(is_finished(JobStatus::queued));
  EXPECT_FALSE(is_finished(JobStatus::running));
  EXPECT_TRUE(is_finished(JobStatus::done));
  EXPECT_TRUE(is_finished(JobStatus::failed));
  EXPECT_TRUE(is_finished(JobStatus::cancelled));
}

}  // namespace
}  // namespace kt
