// kt::Store: the engine's columns (db/engine_store.cpp): pipeline and pinned configs of a job,
// the GPUs it used, its wall and GPU-busy time, which GPU measured a variant and for how long,
// and the NVRTC times behind the job's stats.
#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class EngineStoreTest : public StoreBackendFixture {};

TEST_P(EngineStoreTest, PipelineAndPinnedConfigsAreStoredWithTheJob) {
  Store store(db_path());
  const auto whole = store.job(store.create_job(tune_job()));
  EXPECT_EQ(whole->pipeline, Pipeline::pipelined);
  EXPECT_EQ(whole->pinned_configs_json, "");
  EXPECT_EQ(whole->gpus, 0);
  EXPECT_FALSE(whole->wall_seconds.has_value());
  EXPECT_FALSE(whole->gpu_busy_seconds.has_value());

  NewJob pinned = tune_job();
  pinned.pipeline = Pipeline::serial;
  pinned.pinned_configs_json = R"([{"config":{"BM":64},"template":"gemm_mma"}])";
  const auto job = store.job(store.create_job(pinned));
  EXPECT_EQ(job->pipeline, Pipeline::serial);
  EXPECT_EQ(job->pinned_configs_json, pinned.pinned_configs_json);
  EXPECT_EQ(store.jobs({}).size(), 2u);
}

TEST_P(EngineStoreTest, GpusAndTimingAreReplacedAndReadBack) {
  Store store(db_path());
  const std::int64_t id = store.create_job(tune_job());
  store.set_job_gpus(id, 2);
  store.set_job_timing(id, 12.5, 20.0);
  store.set_job_timing(id, 14.0, 23.5);  // a later figure replaces the earlier one
  auto job = store.job(id);
  EXPECT_EQ(job->gpus, 2);
  EXPECT_DOUBLE_EQ(*job->wall_seconds, 14.0);
  EXPECT_DOUBLE_EQ(*job->gpu_busy_seconds, 23.5);
  store.set_job_timing(id, 3.0, std::nullopt);  // a compile-only job has no GPU time
  job = store.job(id);
  EXPECT_DOUBLE_EQ(*job->wall_seconds, 3.0);
  EXPECT_FALSE(job->gpu_busy_seconds.has_value());
  EXPECT_THROW(store.set_job_gpus(999, 1), std::invalid_argument);
  EXPECT_THROW(store.set_job_timing(999, 1, 1), std::invalid_argument);
}

TEST_P(EngineStoreTest, WorkerTimeAndGpuOfAVariant) {
  Store store(db_path());
  const std::int64_t id = store.create_job(tune_job());
  const auto variants = plan(store, id, 2);
  EXPECT_FALSE(variants[0].gpu_ordinal.has_value());
  EXPECT_EQ(variants[0].measure_ms, 0);
  store.record_worker_time(variants[0].id, 1, 842.5);
  store.record_outcome(variants[0].id, measured(100, 1e-3));  // the outcome keeps them
  const auto v = store.variant(variants[0].id);
  EXPECT_EQ(v->gpu_ordinal, 1);
  EXPECT_DOUBLE_EQ(v->measure_ms, 842.5);
  EXPECT_FALSE(store.variant(variants[1].id)->gpu_ordinal.has_value());
  EXPECT_THROW(store.record_worker_time(12345, 0, 1), std::invalid_argument);
}

TEST_P(EngineStoreTest, CompileTimesLeaveOutCacheHitsAndUncompiledVariants) {
  Store store(db_path());
  const std::int64_t id = store.create_job(tune_job());
  const auto variants = plan(store, id, 4);
  CompileResult first = compiled(64, 0);
  first.compile_ms = 1500;
  store.record_compile(variants[0].id, first, 128, 0);
  CompileResult hit = compiled(64, 0);
  hit.compile_ms = 0;  // from the cache
  store.record_compile(variants[1].id, hit, 128, 0);
  CompileResult failed;
  failed.log = "error";
  failed.compile_ms = 700;  // NVRTC ran and refused: that is compile time too
  store.record_compile(variants[2].id, failed, 128, 0);
  EXPECT_EQ(store.compile_times_ms(id), (std::vector<double>{1500, 700}));
  EXPECT_TRUE(store.compile_times_ms(id + 1).empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, EngineStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
