// The job's winner from the interleaved re-measure (db/winner_store.cpp).
#include <stdexcept>

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class WinnerStoreTest : public StoreBackendFixture {};

InterleavedResult comparison(std::int64_t winner, std::int64_t runner_up, bool distinguishable,
                             double margin) {
  InterleavedResult r;
  r.variant_ids = {winner, runner_up};
  r.timings.resize(2);  // as the worker sends them: one per variant
  r.winner_variant_id = winner;
  r.runner_up_variant_id = runner_up;
  r.distinguishable = distinguishable;
  r.margin = margin;
  return r;
}

TEST_P(WinnerStoreTest, NoComparisonUntilOneIsRecorded) {
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

TEST_P(WinnerStoreTest, ComparisonIsStoredReadBackAndReplaced) {
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

TEST_P(WinnerStoreTest, ALoneCandidateHasNoRunnerUp) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 1);
  InterleavedResult alone;
  alone.variant_ids = {variants[0].id};
  alone.timings.resize(1);
  alone.winner_variant_id = variants[0].id;
  store.record_winner_comparison(id, alone);
  const auto job = store.job(id);
  EXPECT_EQ(job->winner_variant_id.value_or(0), variants[0].id);
  EXPECT_FALSE(job->runner_up_variant_id);
  EXPECT_FALSE(job->winner_distinguishable);
  EXPECT_FALSE(job->winner_margin);
}

TEST_P(WinnerStoreTest, RejectsUnknownJobsAndOtherJobsVariantsWithoutWriting) {
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

TEST_P(WinnerStoreTest, TheFinalComparisonIsTheJobsResultAndRanksTheFront) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 2);
  store.record_outcome(variants[0].id, measured(20.0, 0.001));  // first pass: the faster one
  store.record_outcome(variants[1].id, measured(20.2, 0.001));
  const auto job = store.job(id);
  ASSERT_TRUE(store.best(job->family, job->dtype, job->shape_key, ""));
  EXPECT_EQ(store.best(job->family, job->dtype, job->shape_key, "")->variant.id, variants[0].id);

  // Interleaved, the second is faster (winner's curse on the first pass), beside the baseline.
  InterleavedResult final = comparison(variants[1].id, variants[0].id, true, 0.02);
  final.variant_ids = {variants[0].id, variants[1].id};
  final.timings = {TimingSummary{20.5, 20.4, 20.4, 20.6, 20.5, 0.002, 100, true},
                   TimingSummary{20.1, 20.0, 20.0, 20.2, 20.1, 0.002, 100, true}};
  final.baseline_timing = TimingSummary{20.3, 20.2, 20.2, 20.4, 20.3, 0.002, 100, true};
  final.baseline = {{"kind", "cublaslt_gemm"}, {"algorithm_index", 1}};
  final.speedups = {{0.99, 0.98, 1.0}, {1.01, 1.005, 1.015}};
  store.record_winner_comparison(id, final);

  const auto back = store.job(id);
  ASSERT_TRUE(back->final_comparison);
  EXPECT_EQ(back->final_comparison->winner_variant_id, variants[1].id);
  ASSERT_TRUE(winner_speedup(*back->final_comparison));
  EXPECT_DOUBLE_EQ(winner_speedup(*back->final_comparison)->low, 1.005);
  EXPECT_EQ(back->final_comparison->baseline.at("algorithm_index"), 1);
  // The front ranks by the final medians now; the first-pass rows stay as they were measured.
  const auto best = store.best(job->family, job->dtype, job->shape_key, "");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, variants[1].id);
  EXPECT_DOUBLE_EQ(store.variant(variants[0].id)->timing->median_us, 20.0);
}

TEST_P(WinnerStoreTest, EachGpusBaselineIsKeptAndTheFirstIsTheJobsReference) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  BaselineTiming gpu1{TimingSummary{30, 29, 29.5, 31, 30, 0.002, 50, true},
                      {{"kind", "cublaslt_gemm"}, {"algorithm_index", 0}},
                      std::nullopt};
  BaselineTiming gpu0{TimingSummary{31, 30, 30.5, 32, 31, 0.002, 50, true},
                      {{"kind", "cublaslt_gemm"}, {"algorithm_index", 3}},
                      std::nullopt};
  store.record_job_baseline(id, 1, gpu1);
  store.record_job_baseline(id, 0, gpu0);
  const auto job = store.job(id);
  EXPECT_DOUBLE_EQ(job->reference_us.value_or(-1), 30);  // the first one recorded
  ASSERT_TRUE(job->baselines.contains("0") && job->baselines.contains("1")) << job->baselines;
  EXPECT_EQ(job->baselines["0"]["median_us"], 31);
  EXPECT_EQ(job->baselines["0"]["baseline"]["algorithm_index"], 3);
  EXPECT_THROW(store.record_job_baseline(id + 100, 0, gpu0), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Backends, WinnerStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
