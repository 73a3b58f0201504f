// The runner's seam to the searchers (engine/job_search.cpp) on a real store: batches planned as
// they are proposed, the budget and the stop conditions, the convergence record, and a resumed
// job that continues without repeating a finished variant.
#include "engine/job_search.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "engine/warm_start.hpp"
#include "support/store_fixtures.hpp"
#include "support/tile_launch_family.hpp"
#include "tuner/search/launch_facts.hpp"

namespace kt {
namespace {

using namespace kt::test;

class JobSearchTest : public StoreFixture {};

// 6 x 6 x 4 configs of one template; time is smallest at BM=128, BN=64, STAGES=3.
std::vector<VariantRecord> candidates(std::int64_t job_id) {
  std::vector<VariantRecord> out;
  for (std::int64_t bm : {16, 32, 64, 128, 256, 512})
    for (std::int64_t bn : {16, 32, 64, 128, 256, 512})
      for (std::int64_t stages : {2, 3, 4, 5}) {
        VariantRecord v;
        v.job_id = job_id;
        v.template_name = "gemm_mma";
        v.config = {{"BM", bm}, {"BN", bn}, {"STAGES", stages}};
        v.config_key = canonical_key(v.config);
        out.push_back(v);
      }
  return out;
}

double time_of(const Config& c) {
  return 100 * (1 + 0.3 * std::abs(std::log2(c.at("BM") / 128.0)) +
                0.2 * std::abs(std::log2(c.at("BN") / 64.0)) + 0.05 * std::abs(c.at("STAGES") - 3));
}

JobRecord searched_job(Store& store, const std::string& search, std::int64_t budget,
                       int patience = 0) {
  NewJob job = tune_job();
  job.budget = budget;
  job.search = search;
  job.search_patience = patience;
  return *store.job(store.create_job(job));
}

// Takes up to `count` variants from the feed and records each measured.
std::vector<std::int64_t> run_some(Store& store, SearchFeed& feed, std::size_t count) {
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = feed.next(0);
    if (!v) break;
    store.record_outcome(v->id, measured(time_of(v->config), 0.001));
    ids.push_back(v->id);
  }
  return ids;
}

TEST(JobSearch, WhichJobsUseASearcher) {
  JobRecord job;
  job.search = "local";
  job.budget = 50;
  EXPECT_TRUE(uses_searcher(job));
  job.search = "random";
  EXPECT_FALSE(uses_searcher(job)) << "random keeps the plan's seeded sample";
  job.search_patience = 2;
  EXPECT_TRUE(uses_searcher(job));
  job.search = "exhaustive";
  job.search_patience = 0;
  job.budget = 0;
  EXPECT_FALSE(uses_searcher(job));
  job.search = "local";
  job.pipeline = Pipeline::serial;
  EXPECT_FALSE(uses_searcher(job));
  job.pipeline = Pipeline::pipelined;
  job.search = "";
  EXPECT_FALSE(uses_searcher(job)) << "a job stored before the searchers";
}

TEST(JobSearch, PatienceCountsMeasuredVariantsSinceTheLastRealImprovement) {
  std::vector<ConvergencePoint> curve;
  for (std::int64_t n = 1; n <= 10; ++n) curve.push_back({n, n, 100, n <= 2 ? 120.0 : 100.0});
  EXPECT_FALSE(patience_exhausted(curve, 0, 4, 0.01));  // 0: never
  EXPECT_FALSE(patience_exhausted(curve, 2, 4, 0.01));  // 7 since the drop at 3: under 8
  curve.push_back({11, 11, 99.5, 99.5});                // under the noise: no reset
  EXPECT_TRUE(patience_exhausted(curve, 2, 4, 0.01));
  curve.push_back({12, 12, 90, 90});
  EXPECT_FALSE(patience_exhausted(curve, 2, 4, 0.01));
}

TEST_F(JobSearchTest, TheBudgetBoundsWhatIsPlannedAndTheConvergenceIsRecorded) {
  Store store(db_path());
  const JobRecord job = searched_job(store, "local", 20);
  SearchFeed feed(store, job, candidates(job.id), 8);
  const auto ids = run_some(store, feed, 100);
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_EQ(feed.stopped(), SearchStop::budget);
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), 20u);
  EXPECT_EQ(store.variants(job.id).size(), 20u) << "only proposed batches are planned";

  const auto curve = store.convergence(job.id);
  ASSERT_EQ(curve.size(), 20u);
  for (std::size_t i = 0; i < curve.size(); ++i) {
    EXPECT_EQ(curve[i].measured, static_cast<std::int64_t>(i + 1));
    if (i > 0) EXPECT_LE(curve[i].best_us, curve[i - 1].best_us);
    EXPECT_LE(curve[i].best_us, curve[i].median_us);
  }
  // Re-recording a variant does not add a point.
  store.record_outcome(ids[0], measured(1, 0.001));
  EXPECT_EQ(store.convergence(job.id).size(), 20u);
}

TEST_F(JobSearchTest, AResumedSearchHandsOutItsUnfinishedVariantsFirstAndRepeatsNothing) {
  Store store(db_path());
  const JobRecord job = searched_job(store, "model", 40);
  std::set<std::int64_t> finished;
  std::vector<VariantRecord> in_flight;
  {
    SearchFeed before_crash(store, job, candidates(job.id), 8);
    for (std::int64_t id : run_some(store, before_crash, 13)) finished.insert(id);
    // Two handed out, never finished: the daemon died while they were compiling.
    for (int i = 0; i < 2; ++i) in_flight.push_back(*before_crash.next(0));
  }
  SearchFeed resumed(store, job, candidates(job.id), 8);
  std::vector<std::int64_t> after;
  while (const auto v = resumed.next(0)) {
    after.push_back(v->id);
    store.record_outcome(v->id, measured(time_of(v->config), 0.001));
  }
  ASSERT_GE(after.size(), 2u);
  // Its own batch's remaining rows come back too (they were planned, pending), in_flight first.
  EXPECT_EQ(after[0], in_flight[0].id);
  EXPECT_EQ(after[1], in_flight[1].id);
  for (std::int64_t id : after) EXPECT_FALSE(finished.count(id)) << "variant " << id << " twice";
  EXPECT_EQ(finished.size() + after.size(), 40u);
  EXPECT_EQ(resumed.stopped(), SearchStop::budget);
}

TEST_F(JobSearchTest, PatienceStopsASearchThatNoLongerImproves) {
  Store store(db_path());
  const JobRecord job = searched_job(store, "exhaustive", 0, /*patience=*/2);
  SearchFeed feed(store, job, candidates(job.id), 8);
  const auto ids = run_some(store, feed, 1000);
  EXPECT_EQ(feed.stopped(), SearchStop::patience);
  EXPECT_LT(ids.size(), candidates(job.id).size());
}

// Variants measured until one is within 3% of the optimum (100 us), like kt-replay counts.
std::size_t measured_until_near_optimum(Store& store, SearchFeed& feed) {
  std::size_t n = 0;
  while (const auto v = feed.next(0)) {
    ++n;
    const double time = time_of(v->config);
    store.record_outcome(v->id, measured(time, 0.001));
    if (time <= 103) return n;
  }
  return n;
}

// Issue 15: a job on a shape near a tuned one measures the tuned shape's best configs first (those
// that survive its constraints), and its searcher learns from them. time_of does not depend on
// the shape, so the neighbour's best is this shape's best too: the replay-style figure is the
// number of variants measured before one is within 3% of the optimum.
TEST_F(JobSearchTest, AWarmStartedSearchMeasuresTheNearestShapesBestConfigsFirst) {
  Store store(db_path());
  const JobRecord tuned = searched_job(store, "local", 100);
  SearchFeed tuned_feed(store, tuned, candidates(tuned.id), 8);
  run_some(store, tuned_feed, 100);
  const auto tuned_best = store.best("gemm", "bf16", kShapeKey, "");
  ASSERT_TRUE(tuned_best);
  ASSERT_LE(time_of(tuned_best->variant.config), 103) << "the neighbour itself found the optimum";

  const Shape nearby{{"M", 4096}, {"N", 4096}, {"K", 2048}};
  auto warm = find_warm_start(store, "gemm", "bf16", nearby, tuned.device_name);
  ASSERT_TRUE(warm);
  EXPECT_EQ(warm->from.at(0).shape_key, kShapeKey);
  ASSERT_GT(warm->seeds.size(), kSeedsPerShape) << "more candidates than a job measures";
  // A seed this shape's space does not hold (pruned here) is skipped and does not count.
  warm->seeds.insert(
      warm->seeds.begin() + 1,
      WarmStartSeed{"gemm_mma", {{"BM", 1024}, {"BN", 64}, {"STAGES", 3}}, kShapeKey, 0});

  auto job_on = [&](bool warm_started) {
    NewJob job = tune_job();
    job.shape = nearby;
    job.budget = 60;
    job.search = "local";
    if (warm_started) job.warm_start_json = to_json(*warm).dump();
    return *store.job(store.create_job(job));
  };
  const JobRecord warm_job = job_on(true);
  SearchFeed warm_feed(store, warm_job, candidates(warm_job.id), 8);
  ASSERT_EQ(warm_feed.seeds().size(), kSeedsPerShape);
  std::vector<Config> first;
  for (std::size_t i = 0; i < warm_feed.seeds().size(); ++i) {
    const auto v = warm_feed.next(0);
    ASSERT_TRUE(v);
    first.push_back(v->config);
    store.record_outcome(v->id, measured(time_of(v->config), 0.001));
  }
  std::vector<Config> expected;
  for (const WarmStartSeed& seed : warm->seeds)
    if (seed.config.at("BM") != 1024 && expected.size() < kSeedsPerShape)
      expected.push_back(seed.config);
  EXPECT_EQ(first, expected);
  EXPECT_EQ(first.front(), tuned_best->variant.config);

  // Against the same search from nothing, over several seeds (the job id seeds the searcher).
  std::size_t cold_total = 0, warm_total = 0;
  for (int round = 0; round < 5; ++round) {
    const JobRecord cold = job_on(false);
    SearchFeed cold_feed(store, cold, candidates(cold.id), 8);
    EXPECT_TRUE(cold_feed.seeds().empty());
    cold_total += measured_until_near_optimum(store, cold_feed);
    const JobRecord warmed = job_on(true);
    SearchFeed warmed_feed(store, warmed, candidates(warmed.id), 8);
    const std::size_t n = measured_until_near_optimum(store, warmed_feed);
    EXPECT_EQ(n, 1u) << "the neighbour's best is measured first";
    warm_total += n;
  }
  EXPECT_LT(warm_total, cold_total);
}

TEST_F(JobSearchTest, OnlyLearningSearchesAreWarmStarted) {
  Store store(db_path());
  WarmStart warm;
  warm.seeds.push_back({"gemm_mma", {{"BM", 512}, {"BN", 512}, {"STAGES", 5}}, kShapeKey, 1});
  NewJob job = tune_job();
  job.budget = 8;
  job.search = "exhaustive";
  job.warm_start_json = to_json(warm).dump();
  const JobRecord exhaustive = *store.job(store.create_job(job));
  SearchFeed feed(store, exhaustive, candidates(exhaustive.id), 8);
  EXPECT_TRUE(feed.seeds().empty());
  EXPECT_EQ(feed.next(0)->config.at("BM"), 16) << "enumeration order, unseeded";

  job.search = "model";
  job.warm_start_json = "not json";  // ignored, with a warning
  const JobRecord broken = *store.job(store.create_job(job));
  SearchFeed broken_feed(store, broken, candidates(broken.id), 8);
  EXPECT_TRUE(broken_feed.seeds().empty());
  EXPECT_TRUE(broken_feed.next(0));
}

// The family behind candidates(): grid cdiv(N,BN) x cdiv(M,BM) of 128-thread blocks.
Family gemm_mma_family() {
  return test::tile_launch_family("gemm", "gemm_mma");
}

// The runner tells the searcher each candidate's grid and whether the shape is memory-bound: on
// a decode shape the first batch fills one wave; on 4096^3 it is the plain searcher's.
TEST_F(JobSearchTest, OnAMemoryBoundShapeTheFirstBatchFillsOneWave) {
  Store store(db_path());
  const Family family = gemm_mma_family();
  const DeviceLimits limits = limits_for_arch("sm_90a").value();
  NewJob decode = tune_job();
  decode.shape = {{"M", 64}, {"N", 4096}, {"K", 7168}};
  decode.budget = 16;
  decode.search = "local";
  const JobRecord job = *store.job(store.create_job(decode));
  SearchFeed feed(store, job, candidates(job.id), 8, &family, limits);
  EXPECT_TRUE(feed.problem().memory_bound);
  EXPECT_EQ(feed.problem().sm_count, 132);
  for (int i = 0; i < 8; ++i) {
    const auto v = feed.next(0);
    ASSERT_TRUE(v);
    const GridFacts grid =
        grid_facts(family, v->template_name, v->config, job.shape, "bf16", limits);
    EXPECT_TRUE(fills_one_wave({v->template_name, v->config, {}, grid.blocks, grid.blocks_per_sm},
                               feed.problem()))
        << v->config_key << ": " << grid.blocks << " blocks";
  }

  const JobRecord square = searched_job(store, "local", 16);  // 4096^3: compute-bound
  SearchFeed square_feed(store, square, candidates(square.id), 8, &family, limits);
  EXPECT_FALSE(square_feed.problem().memory_bound);
  std::vector<SearchCandidate> plain;
  for (const VariantRecord& row : candidates(square.id))
    plain.push_back({row.template_name, row.config});
  const std::vector<SearchObservation> none;
  const std::vector<bool> taken(plain.size(), false);
  for (std::size_t c : make_searcher("local", static_cast<std::uint64_t>(square.id))
                           ->propose({plain, none, taken}, 8))
    EXPECT_EQ(square_feed.next(0)->config, plain[c].config);
}

}  // namespace
}  // namespace kt
