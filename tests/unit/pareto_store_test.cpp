// The stored Pareto front per problem and best() on it (db/pareto_store.cpp).
#include "db/store.hpp"

#include <gtest/gtest.h>

#include "support/baseline_fixtures.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class ParetoStoreTest : public StoreBackendFixture {};

TEST_P(ParetoStoreTest, FrontDropsDominatedPointsAndDominatingOnesEvict) {
  Store store(db_path());
  const auto id = store.create_job(tune_job());
  const auto v = plan(store, id, 5);
  for (const auto& variant : v) store.record_compile(variant.id, compiled(128, 0), 256, 16384);
  auto front = [&] { return ids_of(store.pareto("gemm", "bf16", kShapeKey, "")); };

  store.record_outcome(v[0].id, measured(10, 0.01));
  EXPECT_EQ(front(), std::vector<std::int64_t>{v[0].id});
  store.record_outcome(v[1].id, measured(12, 0.02));  // slower and less accurate: dominated
  EXPECT_EQ(front(), std::vector<std::int64_t>{v[0].id});
  store.record_outcome(v[2].id, measured(8, 0.05));  // faster but less accurate: a trade-off
  EXPECT_EQ(front(), (std::vector<std::int64_t>{v[2].id, v[0].id}));

  // Same time and error as v[0], smaller footprint: 16384 + 4*64*256 < 16384 + 4*128*256.
  store.record_compile(v[3].id, compiled(64, 0), 256, 16384);
  store.record_outcome(v[3].id, measured(10, 0.01));
  EXPECT_EQ(front(), (std::vector<std::int64_t>{v[2].id, v[3].id}));

  store.record_compile(v[4].id, compiled(32, 0), 256, 16384);
  store.record_outcome(v[4].id, measured(5, 0.001));  // better at everything
  EXPECT_EQ(front(), std::vector<std::int64_t>{v[4].id});

  // A compile-only job's results never rank.
  NewJob compile_job = tune_job();
  compile_job.mode = JobMode::compile;
  const auto compile_id = store.create_job(compile_job);
  const auto compile_variants = plan(store, compile_id, 1);
  store.record_outcome(compile_variants[0].id, measured(1, 0));
  EXPECT_EQ(front(), std::vector<std::int64_t>{v[4].id});

  // Re-recording the front's only variant as crashed empties the front.
  VariantOutcome crashed;
  crashed.status = VariantStatus::crashed;
  store.record_outcome(v[4].id, crashed);
  EXPECT_TRUE(front().empty());
  EXPECT_FALSE(store.variant(v[4].id)->timing);
}

TEST_P(ParetoStoreTest, BestIsTheFastestOnTheFrontOfTheRequestedDevice) {
  Store store(db_path());
  const auto h100 = store.create_job(tune_job("NVIDIA H100 80GB HBM3"));
  const auto h200 = store.create_job(tune_job("NVIDIA H200"));
  store.set_job_reference(h100, 20);
  const auto on_h100 = plan(store, h100, 2);
  const auto on_h200 = plan(store, h200, 1);
  store.record_outcome(on_h100[0].id, measured(10, 0.01));
  store.record_outcome(on_h100[1].id, measured(7, 0.03));
  store.record_outcome(on_h200[0].id, measured(4, 0.02));

  auto best = store.best("gemm", "bf16", kShapeKey, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, on_h100[1].id);
  EXPECT_EQ(best->job.id, h100);
  EXPECT_EQ(best->job.device_name, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(best->variant.timing && best->variant.error && best->variant.speedup);
  EXPECT_EQ(best->variant.timing->median_us, 7);
  EXPECT_EQ(best->variant.error->max_rel, 0.03);
  EXPECT_NEAR(*best->variant.speedup, 20.0 / 7.0, 1e-12);
  EXPECT_EQ(best->variant.config.at("BM"), 2);

  best = store.best("gemm", "bf16", kShapeKey, "NVIDIA H200");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, on_h200[0].id);
  best = store.best("gemm", "bf16", kShapeKey, "");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, on_h200[0].id);

  EXPECT_EQ(ids_of(store.pareto("gemm", "bf16", kShapeKey, "NVIDIA H100 80GB HBM3")),
            (std::vector<std::int64_t>{on_h100[1].id, on_h100[0].id}));
  EXPECT_EQ(ids_of(store.pareto("gemm", "bf16", kShapeKey, "")),
            (std::vector<std::int64_t>{on_h200[0].id, on_h100[1].id, on_h100[0].id}));

  EXPECT_FALSE(store.best("gemm", "fp16", kShapeKey, ""));
  EXPECT_FALSE(store.best("gemm", "bf16", "K=1,M=1,N=1", ""));
  EXPECT_FALSE(store.best("gemm", "bf16", kShapeKey, "NVIDIA B200"));
}

// A re-tune after a driver, NVRTC or family-source change replaces the stale points even where
// they were faster; points whose keys are unknown (tuned before the keys) stay.
TEST_P(ParetoStoreTest, ARetuneWithChangedKeysReplacesTheStalePoints) {
  Store store(db_path());
  NewJob unkeyed_job = tune_job();
  NewJob old_job = tune_job();
  old_job.driver_version = 13000;
  old_job.nvrtc_version = "13.0";
  old_job.family_hash = std::string(64, 'a');
  const auto unkeyed = plan(store, store.create_job(unkeyed_job), 1);
  const auto old = plan(store, store.create_job(old_job), 2);
  store.record_outcome(unkeyed[0].id, measured(9, 0.001));
  store.record_outcome(old[0].id, measured(5, 0.02));
  store.record_outcome(old[1].id, measured(6, 0.01));
  auto front = [&] { return ids_of(store.pareto("gemm", "bf16", kShapeKey, "")); };
  EXPECT_EQ(front(), (std::vector<std::int64_t>{old[0].id, old[1].id, unkeyed[0].id}));

  // Same driver and NVRTC, new family sources: the old job's points go, though faster.
  NewJob retune_job = old_job;
  retune_job.family_hash = std::string(64, 'b');
  const auto retuned = plan(store, store.create_job(retune_job), 1);
  store.record_outcome(retuned[0].id, measured(7, 0.005));
  EXPECT_EQ(front(), (std::vector<std::int64_t>{retuned[0].id, unkeyed[0].id}));
  auto best = store.best("gemm", "bf16", kShapeKey, "");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, retuned[0].id);

  // A later point of the same keys competes as before; a new driver replaces again.
  const auto same_keys = plan(store, store.create_job(retune_job), 1);
  store.record_outcome(same_keys[0].id, measured(6.5, 0.005));
  EXPECT_EQ(front(), (std::vector<std::int64_t>{same_keys[0].id, unkeyed[0].id}));
  NewJob new_driver_job = retune_job;
  new_driver_job.driver_version = 13010;
  const auto new_driver = plan(store, store.create_job(new_driver_job), 1);
  store.record_outcome(new_driver[0].id, measured(20, 0.0001));  // a trade-off with unkeyed
  EXPECT_EQ(front(), (std::vector<std::int64_t>{unkeyed[0].id, new_driver[0].id}));
}

// One entry per front, ordered by family, device, dtype and shape, each with its fastest point.
TEST_P(ParetoStoreTest, TunedProblemsListEachFrontWithItsFastestPoint) {
  Store store(db_path());
  const auto h100 = store.create_job(tune_job("NVIDIA H100 80GB HBM3"));
  const auto h200 = store.create_job(tune_job("NVIDIA H200"));
  const auto softmax = store.create_job(tune_job("NVIDIA H200", "softmax"));
  const auto on_h100 = plan(store, h100, 3);
  const auto on_h200 = plan(store, h200, 1);
  const auto on_softmax = plan(store, softmax, 1);
  store.record_outcome(on_h100[0].id, measured(10, 0.01));
  store.record_outcome(on_h100[1].id, measured(7, 0.03));   // the fastest; a trade-off with [0]
  store.record_outcome(on_h100[2].id, measured(12, 0.05));  // dominated: off the front
  store.record_outcome(on_h200[0].id, measured(4, 0.02));
  store.record_outcome(on_softmax[0].id, measured(3, 0.02));

  const auto all = store.tuned_problems("", "", 10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].family, "gemm");
  EXPECT_EQ(all[0].device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(all[0].dtype, "bf16");
  EXPECT_EQ(all[0].shape_key, kShapeKey);
  EXPECT_EQ(all[0].front_size, 2);
  EXPECT_EQ(all[0].best.id, on_h100[1].id);
  EXPECT_EQ(all[1].device_name, "NVIDIA H200");
  EXPECT_EQ(all[1].best.id, on_h200[0].id);
  EXPECT_EQ(all[1].front_size, 1);
  EXPECT_EQ(all[2].family, "softmax");
  EXPECT_EQ(all[2].best.id, on_softmax[0].id);

  const auto gemm_on_h200 = store.tuned_problems("gemm", "NVIDIA H200", 10);
  ASSERT_EQ(gemm_on_h200.size(), 1u);
  EXPECT_EQ(gemm_on_h200[0].best.id, on_h200[0].id);
  EXPECT_EQ(store.tuned_problems("", "", 1).size(), 1u);
  EXPECT_TRUE(store.tuned_problems("attention_fwd", "", 10).empty());
}

// best() is answered from memory between writes: every write (a new front point, a job's status,
// a removed measurement) is seen by the next call, the "nothing tuned" answer included.
TEST_P(ParetoStoreTest, BestFromMemoryFollowsEveryWrite) {
  Store store(db_path());
  EXPECT_FALSE(store.best("gemm", "bf16", kShapeKey, ""));
  const auto id = store.create_job(tune_job());
  const auto v = plan(store, id, 2);
  EXPECT_FALSE(store.best("gemm", "bf16", kShapeKey, ""));  // planned, nothing measured yet

  store.record_outcome(v[0].id, measured(10, 0.01));
  auto best = store.best("gemm", "bf16", kShapeKey, "");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->variant.id, v[0].id);
  EXPECT_EQ(best->job.status, JobStatus::queued);
  EXPECT_EQ(store.best("gemm", "bf16", kShapeKey, "")->variant.id, v[0].id);  // asked again

  store.record_outcome(v[1].id, measured(5, 0.001));
  EXPECT_EQ(store.best("gemm", "bf16", kShapeKey, "")->variant.id, v[1].id);

  store.set_job_status(id, JobStatus::running);
  EXPECT_EQ(store.best("gemm", "bf16", kShapeKey, "")->job.status, JobStatus::running);

  VariantOutcome crashed;
  crashed.status = VariantStatus::crashed;
  store.record_outcome(v[1].id, crashed);
  store.record_outcome(v[0].id, crashed);
  EXPECT_FALSE(store.best("gemm", "bf16", kShapeKey, ""));
}

// The job /v1/best falls back to when no variant of ours was measured: the newest done tune job
// of the problem (device model "" = any) that timed the baseline.
TEST_P(ParetoStoreTest, NewestBaselineJobIsTheNewestDoneTuneJobThatTimedIt) {
  Store store(db_path());
  const Shape shape{{"M", 16}, {"N", 4096}, {"K", 4097}};
  const std::string key = canonical_key(shape);
  EXPECT_FALSE(store.newest_baseline_job("gemm", "bf16", key, "").has_value());

  const std::int64_t older = seed_baseline_only_job(store, shape, 30.0);
  const std::int64_t newer = seed_baseline_only_job(store, shape, 27.0);
  // Not candidates: a running job, a done job that never timed the baseline, a compile job, a
  // job of another shape and one of another dtype.
  NewJob running = tune_job();
  running.shape = shape;
  const std::int64_t running_id = store.create_job(running);
  store.set_job_status(running_id, JobStatus::running);
  store.record_job_baseline(running_id, 0, cublaslt_timing(20.0, 0));
  const std::int64_t untimed = store.create_job(running);
  store.set_job_status(untimed, JobStatus::done);
  NewJob compile = running;
  compile.mode = JobMode::compile;
  compile.device_name = compile.device_uuid = "";
  store.set_job_status(store.create_job(compile), JobStatus::done);
  seed_baseline_only_job(store, {{"M", 16}, {"N", 4096}, {"K", 4096}}, 20.0);
  NewJob fp16 = running;
  fp16.dtype = "fp16";
  const std::int64_t fp16_id = store.create_job(fp16);
  store.record_job_baseline(fp16_id, 0, cublaslt_timing(20.0, 0));
  store.set_job_status(fp16_id, JobStatus::done);

  const auto found = store.newest_baseline_job("gemm", "bf16", key, "");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, newer);
  EXPECT_EQ(found->baselines["0"]["median_us"], 27.0);
  EXPECT_EQ(store.newest_baseline_job("gemm", "bf16", key, "NVIDIA H100 80GB HBM3")->id, newer);
  EXPECT_FALSE(store.newest_baseline_job("gemm", "bf16", key, "NVIDIA H200").has_value());
  EXPECT_NE(older, newer);
}

INSTANTIATE_TEST_SUITE_P(Backends, ParetoStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
