// Planned variants, compile results, outcomes and progress (db/variant_store.cpp).
#include "db/store.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class VariantStoreTest : public StoreBackendFixture {};

TEST_P(VariantStoreTest, ReplanningAResumedJobKeepsFinishedVariantsAndAppendsNewOnes) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const std::vector<PrunedGroup> pruned{
      {"gemm_mma", "constraint failed: smem <= 232448", 1, {{{"BM", 128}}}}};
  const auto first = store.plan_variants(
      id,
      {planned(64), planned(96), planned(256, VariantStatus::unsupported_arch, "needs sm_100a")},
      pruned);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_LT(first[0].id, first[1].id);
  EXPECT_LT(first[1].id, first[2].id);
  EXPECT_EQ(first[0].status, VariantStatus::pending);
  EXPECT_EQ(first[0].config.at("BM"), 64);
  EXPECT_EQ(first[0].config_key, "BM=64,BN=128,STAGES=3");
  EXPECT_EQ(first[2].status, VariantStatus::unsupported_arch);

  store.record_compile(first[0].id, compiled(128, 1024), 256, 4096);
  store.record_outcome(first[0].id, measured(10, 0.01));

  // The restarted daemon plans the same space again (pending, as the planner sees it) plus one.
  const auto second = store.plan_variants(
      id,
      {planned(64), planned(96), planned(256, VariantStatus::unsupported_arch, "needs sm_100a"),
       planned(32)},
      pruned);
  ASSERT_EQ(second.size(), 4u);
  EXPECT_EQ(ids_of(second).front(), first[0].id);
  EXPECT_EQ(second[0].status, VariantStatus::measured);
  ASSERT_TRUE(second[0].timing);
  EXPECT_EQ(second[0].timing->median_us, 10);
  EXPECT_EQ(second[3].config.at("BM"), 32);
  EXPECT_GT(second[3].id, first[2].id);
  EXPECT_EQ(store.variants(id).size(), 4u);

  const JobProgress progress = store.progress(id);
  // The re-planned pruned count replaces the first one: still 1, not 2.
  EXPECT_EQ(progress.total, 5);
  EXPECT_EQ(progress.finished, 3);
  EXPECT_EQ(progress.by_status.at("pending"), 2);
  EXPECT_EQ(progress.by_status.at("measured"), 1);
  EXPECT_EQ(progress.by_status.at("pruned"), 1);
  EXPECT_EQ(progress.by_status.at("unsupported_arch"), 1);
  const auto groups = store.pruned_groups(id);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 1);
  EXPECT_EQ(groups[0].reason, "constraint failed: smem <= 232448");
  ASSERT_EQ(groups[0].examples.size(), 1u);
  EXPECT_EQ(groups[0].examples[0].at("BM"), 128);
}

TEST_P(VariantStoreTest, PrunedConfigsAreCountsNotRows) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  EXPECT_THROW(store.plan_variants(id, {planned(64, VariantStatus::pruned, "too big")}),
               std::invalid_argument);
  // A 68,000-configuration space pruned to a few hundred: the store holds a row per survivor
  // and one per (template, constraint).
  std::vector<PrunedGroup> groups;
  for (int c = 0; c < 5; ++c) {
    PrunedGroup group{"gemm_mma", "constraint failed: c" + std::to_string(c), 13500, {}};
    for (std::int64_t bm = 1; bm <= 5; ++bm) group.examples.push_back({{"BM", bm}});
    groups.push_back(group);
  }
  std::vector<VariantRecord> survivors;
  for (int bm = 1; bm <= 500; ++bm) survivors.push_back(planned(bm));
  store.plan_variants(id, survivors, groups);
  const JobProgress progress = store.progress(id);
  EXPECT_EQ(progress.by_status.at("pruned"), 5 * 13500);
  EXPECT_EQ(progress.total, 5 * 13500 + 500);
  const auto stored = store.pruned_groups(id);
  ASSERT_EQ(stored.size(), 5u);
  EXPECT_EQ(stored[0].examples.size(), kPrunedExamples) << "examples beyond the first few dropped";
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants"), 500);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM pruned_configs"), 5);
}

TEST_P(VariantStoreTest, CountsByStatusFollowEveryChangeOfAVariant) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto rows = store.plan_variants(id, {planned(64), planned(128), planned(256)});
  store.record_outcome(rows[0].id, measured(20, 0.001));
  store.record_outcome(rows[1].id, measured(10, 0.001));
  store.record_outcome(rows[1].id, measured(30, 0.001));  // re-recorded: counted once
  VariantOutcome failed;
  failed.status = VariantStatus::compile_error;
  store.record_outcome(rows[2].id, failed);
  JobProgress progress = store.progress(id);
  EXPECT_EQ(progress.by_status.at("measured"), 2);
  EXPECT_EQ(progress.by_status.at("compile_error"), 1);
  EXPECT_EQ(progress.by_status.count("pending"), 0u) << "a status that drops to 0 is not listed";
  EXPECT_EQ(progress.total, 3);
  EXPECT_EQ(progress.finished, 3);
  // The fastest is kept on the job row and follows a re-recorded time.
  EXPECT_EQ(store.fastest_variant(id)->id, rows[0].id);
  // Another job's counts are its own.
  const auto other = store.create_job(tune_job());
  store.plan_variants(
      other, {planned(64), planned(65, VariantStatus::unsupported_arch, "sm_100a"), planned(66)});
  progress = store.progress(other);
  EXPECT_EQ(progress.total, 3);
  EXPECT_EQ(progress.by_status.at("pending"), 2);
  EXPECT_EQ(progress.by_status.at("unsupported_arch"), 1);
  EXPECT_EQ(store.progress(id).total, 3);
  // One statement moving several variants (a cancel) moves each of them once.
  EXPECT_TRUE(store.request_cancel(other));
  progress = store.progress(other);
  EXPECT_EQ(progress.by_status.at("cancelled"), 2);
  EXPECT_EQ(progress.by_status.at("unsupported_arch"), 1);
  EXPECT_EQ(progress.by_status.count("pending"), 0u);
  EXPECT_EQ(progress.total, 3);
}

TEST_P(VariantStoreTest, PlanningForAnUnknownJobThrowsAndInsertsNothing) {
  Store store(db_path());
  EXPECT_THROW(store.plan_variants(42, {planned(64)}), std::invalid_argument);
  EXPECT_TRUE(store.variants(42).empty());
  EXPECT_THROW(store.record_outcome(42, measured(1, 0)), std::invalid_argument);
}

TEST_P(VariantStoreTest, CompileAndOutcomeAreStoredOnTheVariant) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  store.set_job_reference(id, 30);
  const auto variants = plan(store, id, 2);

  store.record_compile(variants[0].id, compiled(96, 2048), 128, 8192);
  store.record_outcome(variants[0].id, measured(15, 0.002));
  auto v = store.variant(variants[0].id);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->registers, 96);
  EXPECT_EQ(v->spill_bytes, 12);
  EXPECT_EQ(v->smem_bytes, 2048 + 8192);
  EXPECT_EQ(v->threads, 128);
  EXPECT_EQ(v->compile_ms, 12.5);
  EXPECT_EQ(v->kernel_key, "key-96");
  EXPECT_NE(v->compile_log.find("96 registers"), std::string::npos);
  EXPECT_EQ(v->status, VariantStatus::measured);
  ASSERT_TRUE(v->timing && v->error);
  EXPECT_EQ(v->timing->trials, 50);
  EXPECT_TRUE(v->timing->converged);
  EXPECT_EQ(v->error->max_rel, 0.002);
  EXPECT_EQ(v->error->first_bad_index, -1);
  EXPECT_EQ(v->tflops, 500);
  ASSERT_TRUE(v->speedup);  // filled in from the job's cuBLAS time
  EXPECT_DOUBLE_EQ(*v->speedup, 2.0);

  CompileResult failed;
  failed.log = "error: identifier \"foo\" is undefined";
  store.record_compile(variants[1].id, failed, 256, 0);
  VariantOutcome compile_error;
  compile_error.status = VariantStatus::compile_error;
  compile_error.failed_gate = "compile";
  compile_error.reason = "NVRTC failed";
  store.record_outcome(variants[1].id, compile_error);
  v = store.variant(variants[1].id);
  EXPECT_EQ(v->status, VariantStatus::compile_error);
  EXPECT_EQ(v->failed_gate, "compile");
  EXPECT_EQ(v->registers, -1);
  EXPECT_EQ(v->compile_log, failed.log);
  EXPECT_FALSE(v->timing);
  EXPECT_FALSE(v->error);
  EXPECT_FALSE(v->speedup);
}

TEST_P(VariantStoreTest, WrongResultKeepsItsErrorButStaysOffTheFront) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 1);
  VariantOutcome wrong = measured(1, 0.9);
  wrong.status = VariantStatus::wrong_result;
  wrong.failed_gate = "full";
  wrong.timing.reset();
  wrong.error->first_bad_index = 17;
  wrong.error->non_finite = 3;
  store.record_outcome(variants[0].id, wrong);
  const auto v = store.variant(variants[0].id);
  ASSERT_TRUE(v->error);
  EXPECT_EQ(v->error->first_bad_index, 17);
  EXPECT_EQ(v->error->non_finite, 3);
  EXPECT_FALSE(v->timing);
  EXPECT_TRUE(store.pareto("gemm", "bf16", kShapeKey, "").empty());
  EXPECT_FALSE(store.best("gemm", "bf16", kShapeKey, ""));
}

}  // namespace
}  // namespace kt

namespace kt {
namespace {

using namespace kt::test;

TEST_P(VariantStoreTest, GatedOnlyListingAndFastestVariantSkipWhatNeverRan) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto rows = store.plan_variants(
      id, {planned(64), planned(128), planned(256, VariantStatus::unsupported_arch, "sm_100a")});
  EXPECT_FALSE(store.fastest_variant(id));
  store.record_outcome(rows[0].id, measured(20, 0.001));
  store.record_outcome(rows[1].id, measured(12, 0.003));
  EXPECT_EQ(store.variants(id).size(), 3u);
  const auto gated = store.variants(id, /*gated_only=*/true);
  ASSERT_EQ(gated.size(), 2u);
  for (const auto& v : gated) EXPECT_NE(v.status, VariantStatus::unsupported_arch);
  const auto fastest = store.fastest_variant(id);
  ASSERT_TRUE(fastest);
  EXPECT_EQ(fastest->id, rows[1].id);
  EXPECT_DOUBLE_EQ(fastest->timing->median_us, 12);
}

}  // namespace
}  // namespace kt

namespace kt {
namespace {

using namespace kt::test;

TEST_P(VariantStoreTest, LoadedResourcesOverrideTheCompileReportOnlyWhereKnown) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto rows = plan(store, id, 1);
  store.record_compile(rows[0].id, compiled(96, 0), 128, 8192);
  store.record_loaded_resources(rows[0].id, 104, -1);
  auto v = store.variant(rows[0].id);
  EXPECT_EQ(v->registers, 104);
  EXPECT_EQ(v->smem_bytes, 8192);
  store.record_loaded_resources(rows[0].id, -1, 9000);
  v = store.variant(rows[0].id);
  EXPECT_EQ(v->registers, 104);
  EXPECT_EQ(v->smem_bytes, 9000);
}

TEST_P(VariantStoreTest, TimingMethodDiscardsAndClocksAreStoredWithTheMeasurement) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto variants = plan(store, id, 2);
  VariantOutcome graph = measured(3.2, 0.001);
  graph.timing->method = "graph";
  graph.timing->launches_per_sample = 16;
  graph.timing->discarded_samples = 7;
  graph.timing->sm_clock_mhz = 1755;
  graph.timing->throttle_reasons = 0x4 | 0x1;
  store.record_outcome(variants[0].id, graph);
  auto v = store.variant(variants[0].id);
  ASSERT_TRUE(v && v->timing);
  EXPECT_EQ(v->timing->method, "graph");
  EXPECT_EQ(v->timing->launches_per_sample, 16);
  EXPECT_EQ(v->timing->discarded_samples, 7);
  EXPECT_EQ(v->timing->sm_clock_mhz, 1755);
  EXPECT_EQ(v->timing->throttle_reasons, 0x5u);

  // Without NVML the clock and reasons are unknown: stored as NULL, read back as -1 / 0.
  store.record_outcome(variants[1].id, measured(40, 0.001));
  v = store.variant(variants[1].id);
  ASSERT_TRUE(v && v->timing);
  EXPECT_EQ(v->timing->method, "events");
  EXPECT_EQ(v->timing->launches_per_sample, 1);
  EXPECT_EQ(v->timing->sm_clock_mhz, -1);
  EXPECT_EQ(v->timing->throttle_reasons, 0u);
  const std::string where =
      " FROM measurements WHERE variant_id = " + std::to_string(variants[1].id);
  EXPECT_EQ(query_int("SELECT COUNT(*)" + where + " AND sm_clock_mhz IS NULL"), 1);
  EXPECT_EQ(query_int("SELECT COUNT(*)" + where + " AND throttle_reasons IS NULL"), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, VariantStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
