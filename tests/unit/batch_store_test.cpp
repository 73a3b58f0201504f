// Batches in the store (db/batch_store.cpp), on SQLite and PostgreSQL: a batch and its problems
// round-trip whole, pages run newest first, a cancel is marked, ids are never reused.
#include "db/store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class BatchStoreTest : public StoreBackendFixture {};

NewBatch two_problem_batch(const std::string& label) {
  NewBatch batch;
  batch.label = label;
  batch.device = "H100";
  batch.device_model = "NVIDIA H100 80GB HBM3";
  batch.budget_per_shape = 12;
  batch.search = "random";
  BatchProblemRecord first;
  first.position = 0;
  first.family = "gemm";
  first.shape = kShape;
  first.dtype = "bf16";
  first.share = 0.625;
  first.calls = 7;
  first.plan = BatchPlan::refused;
  first.note = "unknown family 'x'";
  first.error_code = "unknown_family";
  BatchProblemRecord second = first;
  second.position = 1;
  second.shape = {{"M", 77}, {"N", 4096}, {"K", 4096}};
  second.plan = BatchPlan::tuned;
  second.job_id = 41;
  second.note = "tuned before (job 41)";
  second.error_code = "";
  batch.problems = {first, second};
  return batch;
}

TEST_P(BatchStoreTest, ABatchRoundTripsWithItsProblemsInOrder) {
  Store store(db_path());
  EXPECT_FALSE(store.batch(1));
  const std::int64_t id = store.create_batch(two_problem_batch("decoder"));
  const auto batch = store.batch(id);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->label, "decoder");
  EXPECT_EQ(batch->device, "H100");
  EXPECT_EQ(batch->device_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(batch->budget_per_shape, 12);
  EXPECT_EQ(batch->search, "random");
  EXPECT_FALSE(batch->retune);
  EXPECT_FALSE(batch->cancel_requested);
  EXPECT_EQ(batch->created_at.size(), 24u) << batch->created_at;  // 2026-12-01T12:34:56.789Z
  ASSERT_EQ(batch->problems.size(), 2u);
  EXPECT_EQ(batch->problems[0].plan, BatchPlan::refused);
  EXPECT_EQ(batch->problems[0].error_code, "unknown_family");
  EXPECT_FALSE(batch->problems[0].job_id);
  EXPECT_DOUBLE_EQ(batch->problems[0].share, 0.625);
  EXPECT_EQ(batch->problems[0].calls, 7);
  EXPECT_EQ(batch->problems[0].shape, kShape);
  EXPECT_EQ(batch->problems[1].plan, BatchPlan::tuned);
  EXPECT_EQ(batch->problems[1].job_id, 41);
  EXPECT_EQ(batch->problems[1].shape.at("M"), 77);

  EXPECT_TRUE(store.request_batch_cancel(id));
  EXPECT_TRUE(store.batch(id)->cancel_requested);
  EXPECT_FALSE(store.request_batch_cancel(id + 100));
}

TEST_P(BatchStoreTest, PagesRunNewestFirstWithACursor) {
  Store store(db_path());
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(store.create_batch(two_problem_batch(std::to_string(i))));
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i], ids[i - 1]);
  const BatchPage first = store.batch_page(2, 0);
  ASSERT_EQ(first.batches.size(), 2u);
  EXPECT_EQ(first.batches[0].id, ids[4]);
  EXPECT_EQ(first.batches[1].id, ids[3]);
  EXPECT_EQ(first.batches[0].problems.size(), 2u);
  ASSERT_TRUE(first.next_before_id);
  const BatchPage last = store.batch_page(3, *first.next_before_id);
  ASSERT_EQ(last.batches.size(), 3u);
  EXPECT_EQ(last.batches[2].id, ids[0]);
  EXPECT_FALSE(last.next_before_id);
  EXPECT_THROW(store.batch_page(0, 0), std::invalid_argument);
}

TEST_P(BatchStoreTest, ABatchPastItsDeadlineIsFoundUntilItIsCancelled) {
  Store store(db_path());
  NewBatch soon = two_problem_batch("soon");
  soon.minutes = 0.0002;  // 12 ms
  NewBatch later = two_problem_batch("later");
  later.minutes = 60;
  const std::int64_t due = store.create_batch(soon);
  store.create_batch(later);
  store.create_batch(two_problem_batch("never"));
  const auto stored = store.batch(due);
  ASSERT_TRUE(stored->deadline_ms);
  EXPECT_DOUBLE_EQ(*stored->minutes, 0.0002);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::vector<BatchRecord> past = store.batches_past_deadline();
  ASSERT_EQ(past.size(), 1u);
  EXPECT_EQ(past[0].id, due);
  EXPECT_EQ(past[0].problems.size(), 2u);
  store.request_batch_cancel(due);
  EXPECT_TRUE(store.batches_past_deadline().empty());
  EXPECT_FALSE(store.batch(due + 2)->deadline_ms);
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
