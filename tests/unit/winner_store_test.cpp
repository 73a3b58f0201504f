// The job's winner from the interleaved re-measure (db/winner_store.cpp).
#include <stdexcept>

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class WinnerStoreTest : public StoreFixture {};

InterleavedResult comparison(std::int64_t winner, std::int64_t runner_up, bool distinguishable,
                             double margin) {
  InterleavedResult r;
  r.variant_ids = {winner, runner_up};
  r.winner_variant_id = winner;
  r.runner_up_variant_id = runner_up;
  r.distinguishable = distinguishable;
  r.margin = margin;
  return r;
}

TEST_F(WinnerStoreTest, NoComparisonUntilOneIsRecorded) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto job = store.job(id);
  ASSERT_TRUE(job);
  EXPECT_FALSE(job->winner_variant_id);
  EXPECT_FALSE(job->runner_up_variant_id);
  EXPECT_FALSE(job->winner_distinguishable);
  EXPECT_FALSE(job->winner_margin);
  EXPECT_FALSE(job->winner_median_us);
}

TEST_F(WinnerStoreTest, ComparisonIsStoredReadBackAndReplaced) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 3);
  store.record_outcome(variants[0].id, measured(20.0, 0.001));
  store.record_outcome(variants[1].id, measured(20.1, 0.001));
  store.record_outcome(variants[2].id, measured(25.0, 0.001));

  // The interleaved re-measure may reverse a near-tie: the second variant wins this time.
  store.record_winner_comparison(id, comparison(variants[1].id, variants[0].id, false, 0.004));
  auto job = store.job(id);
  ASSERT_TRUE(job && job->winner_variant_id && job->runner_up_variant_id);
  EXPECT_EQ(*job->winner_variant_id, variants[1].id);
  EXPECT_EQ(*job->runner_up_variant_id, variants[0].id);
  ASSERT_TRUE(job->winner_distinguishable);
  EXPECT_FALSE(*job->winner_distinguishable);
  EXPECT_DOUBLE_EQ(job->winner_margin.value_or(-1), 0.004);
  // The medians shown next to it are the variants' own stored measurements.
  EXPECT_DOUBLE_EQ(job->winner_median_us.value_or(-1), 20.1);
  EXPECT_DOUBLE_EQ(job->runner_up_median_us.value_or(-1), 20.0);

  store.record_winner_comparison(id, comparison(variants[0].id, variants[2].id, true, 0.25));
  job = store.jobs({}).front();  // the listing reads the same columns
  EXPECT_EQ(job->winner_variant_id.value_or(0), variants[0].id);
  EXPECT_TRUE(job->winner_distinguishable.value_or(false));
  EXPECT_DOUBLE_EQ(job->runner_up_median_us.value_or(-1), 25.0);
}

TEST_F(WinnerStoreTest, ALoneCandidateHasNoRunnerUp) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 1);
  InterleavedResult alone;
  alone.variant_ids = {variants[0].id};
  alone.winner_variant_id = variants[0].id;
  store.record_winner_comparison(id, alone);
  const auto job = store.job(id);
  EXPECT_EQ(job->winner_variant_id.value_or(0), variants[0].id);
  EXPECT_FALSE(job->runner_up_variant_id);
  EXPECT_FALSE(job->winner_distinguishable);
  EXPECT_FALSE(job->winner_margin);
}

TEST_F(WinnerStoreTest, RejectsUnknownJobsAndOtherJobsVariantsWithoutWriting) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto other = store.create_job(tune_job());
  const auto mine = plan(store, id, 2);
  const auto theirs = plan(store, other, 1);
  EXPECT_THROW(
      store.record_winner_comparison(id + 100, comparison(mine[0].id, mine[1].id, true, 0.1)),
      std::invalid_argument);
  EXPECT_THROW(store.record_winner_comparison(id, comparison(theirs[0].id, mine[1].id, true, 0.1)),
               std::invalid_argument);
  EXPECT_THROW(store.record_winner_comparison(id, comparison(mine[0].id, theirs[0].id, true, 0.1)),
               std::invalid_argument);
  EXPECT_FALSE(store.job(id)->winner_variant_id);
}

}  // namespace
}  // namespace kt
