// kt::Store opening, schema, devices, jobs, durability and concurrency (db/store.cpp,
// db/schema.cpp, db/device_store.cpp, db/job_store.cpp).
#include "db/store.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"
#include "tuner/pareto.hpp"

namespace kt {
namespace {

using namespace kt::test;

class StoreTest : public StoreBackendFixture {};
// What only an SQLite file has: WAL, PRAGMA user_version, a file that is not a database.
class SqliteStoreTest : public StoreFixture {};

TEST_P(StoreTest, FreshDatabaseGetsTheLatestSchemaAndReopensUnchanged) {
  {
    Store store(db_path());
    EXPECT_EQ(store.schema_version(), 13);
    store.create_job(tune_job());
  }
  {
    Store reopened(db_path());
    EXPECT_EQ(reopened.schema_version(), 13);
    EXPECT_EQ(reopened.jobs({}).size(), 1u);
  }
  if (GetParam() == db::Dialect::postgresql) {
    EXPECT_EQ(query_int("SELECT version FROM kerntune_schema"), 13);
    return;
  }
  SQLite::Database raw(db_path(), SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 13);
}

TEST_F(SqliteStoreTest, RefusesADatabaseFromANewerKerntuneWithoutTouchingIt) {
  {
    SQLite::Database raw(db_path(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA user_version = 999");
  }
  try {
    Store store(db_path());
    FAIL() << "a version 999 database was opened";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(db_path().string()), std::string::npos) << message;
    EXPECT_NE(message.find("999"), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
  }
  SQLite::Database raw(db_path(), SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 999);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "delete");
  EXPECT_FALSE(raw.tableExists("jobs"));
}

// A store of schema 5 (before the result keys) opens with its jobs unkeyed, not stale.
TEST_F(SqliteStoreTest, AStoreFromBeforeTheResultKeysMigratesWithItsJobsUnkeyed) {
  std::int64_t id = 0;
  {
    Store store(db_path());
    id = store.create_job(tune_job());
  }
  {
    SQLite::Database raw(db_path(), SQLite::OPEN_READWRITE);
    for (const char* column : {"driver_version", "nvrtc_version", "family_hash", "warm_start_json"})
      raw.exec(std::string("ALTER TABLE jobs DROP COLUMN ") + column);
    raw.exec("DROP TABLE registered_families");  // schema 7's, after the keys
    // And what the later steps added (the fleet's leases, durable family registrations, the
    // mark of begun work, batches).
    raw.exec("DROP TABLE batch_problems");
    raw.exec("DROP TABLE batches");
    raw.exec("DROP TABLE family_registrations");
    raw.exec("DROP INDEX variants_by_lease");
    raw.exec("DROP TABLE daemons");
    for (const char* column : {"lease_owner", "lease_expires_ms", "lease_expiries", "lease_history",
                               "work_began_ms", "lease_expiry_owners"})
      raw.exec(std::string("ALTER TABLE variants DROP COLUMN ") + column);
    raw.exec("PRAGMA user_version = 5");
  }
  Store store(db_path());
  EXPECT_EQ(store.schema_version(), 13);
  const auto job = store.job(id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->shape, kShape);
  EXPECT_EQ(job->driver_version, 0);
  EXPECT_EQ(job->nvrtc_version, "");
  EXPECT_EQ(job->family_hash, "");
}

TEST_F(SqliteStoreTest, RefusesAFileThatIsNotADatabase) {
  std::ofstream(db_path()) << "this is not an SQLite database, just some text long enough......"
                           << std::string(200, 'x');
  try {
    Store store(db_path());
    FAIL() << "a text file was opened as a database";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(db_path().string()), std::string::npos) << e.what();
  }
}

TEST_P(StoreTest, JobLifecycleKeepsFieldsAndStampsTimes) {
  Store store(db_path());
  NewJob request = tune_job();
  request.budget = 40;
  const std::int64_t id = store.create_job(request);

  auto job = store.job(id);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->family, "gemm");
  EXPECT_EQ(job->shape, kShape);
  EXPECT_EQ(job->shape_key, "K=4096,M=4096,N=4096");
  EXPECT_EQ(job->dtype, "bf16");
  EXPECT_EQ(job->mode, JobMode::tune);
  EXPECT_EQ(job->arch, "sm_90a");
  EXPECT_EQ(job->device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(job->budget, 40);
  EXPECT_EQ(job->status, JobStatus::queued);
  EXPECT_FALSE(job->reference_us);
  EXPECT_TRUE(is_iso8601_utc(job->created_at)) << job->created_at;
  EXPECT_EQ(job->started_at, "");
  EXPECT_EQ(job->finished_at, "");

  store.set_job_status(id, JobStatus::running);
  const std::string started = store.job(id)->started_at;
  EXPECT_TRUE(is_iso8601_utc(started)) << started;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  store.set_job_status(id, JobStatus::running);  // a resumed job keeps its first start
  EXPECT_EQ(store.job(id)->started_at, started);
  EXPECT_EQ(store.job(id)->finished_at, "");

  store.set_job_reference(id, 123.5);
  store.set_job_status(id, JobStatus::failed, "worker could not start");
  job = store.job(id);
  EXPECT_EQ(job->status, JobStatus::failed);
  EXPECT_EQ(job->reason, "worker could not start");
  EXPECT_EQ(job->reference_us, 123.5);
  EXPECT_TRUE(is_iso8601_utc(job->finished_at)) << job->finished_at;
  EXPECT_GE(job->finished_at, job->started_at);

  store.set_job_status(id, JobStatus::running);  // final states are final
  EXPECT_EQ(store.job(id)->status, JobStatus::failed);
  EXPECT_FALSE(store.job(id + 100));
}

TEST_P(StoreTest, ModeAndPipelineAreStoredAsTheirApiText) {
  Store store(db_path());
  NewJob request = tune_job();
  request.mode = JobMode::compile;
  request.pipeline = Pipeline::serial;
  const std::int64_t id = store.create_job(request);
  EXPECT_EQ(store.job(id)->mode, JobMode::compile);
  EXPECT_EQ(store.job(id)->pipeline, Pipeline::serial);

  const std::string where = " FROM jobs WHERE id = " + std::to_string(id);
  EXPECT_EQ(query_text("SELECT mode" + where), "compile");
  EXPECT_EQ(query_text("SELECT pipeline" + where), "serial");

  // A row whose text no release wrote is reported, not guessed at.
  execute("UPDATE jobs SET mode = 'benchmark' WHERE id = " + std::to_string(id));
  EXPECT_THROW(store.job(id), std::runtime_error);
}

// Issue 15: what a job's results are keyed to, and its warm start, come back as stored.
TEST_P(StoreTest, ResultKeysAndWarmStartAreStoredWithTheJob) {
  Store store(db_path());
  NewJob request = tune_job();
  request.driver_version = 13000;
  request.nvrtc_version = "13.0";
  request.family_hash = std::string(64, 'a');
  request.warm_start_json = R"({"from":[],"seeds":[]})";
  const JobRecord job = *store.job(store.create_job(request));
  EXPECT_EQ(job.driver_version, 13000);
  EXPECT_EQ(job.nvrtc_version, "13.0");
  EXPECT_EQ(job.family_hash, std::string(64, 'a'));
  EXPECT_EQ(job.warm_start_json, R"({"from":[],"seeds":[]})");
  const JobRecord unkeyed = *store.job(store.create_job(tune_job()));
  EXPECT_EQ(unkeyed.driver_version, 0);
  EXPECT_EQ(unkeyed.family_hash, "");
  EXPECT_EQ(unkeyed.warm_start_json, "");
}

TEST_P(StoreTest, UnfinishedJobsAreQueuedOrRunningOldestFirst) {
  Store store(db_path());
  const auto first = store.create_job(tune_job());
  const auto second = store.create_job(tune_job());
  const auto third = store.create_job(tune_job());
  const auto fourth = store.create_job(tune_job());
  store.set_job_status(second, JobStatus::done);
  store.set_job_status(third, JobStatus::running);
  store.request_cancel(fourth);
  EXPECT_EQ(store.unfinished_jobs(), (std::vector<std::int64_t>{first, third}));
}

TEST_P(StoreTest, HistoryFiltersByFamilyAndStatusAndPagesNewestFirst) {
  Store store(db_path());
  std::vector<std::int64_t> gemm;
  for (int i = 0; i < 5; ++i) gemm.push_back(store.create_job(tune_job()));
  const auto other = store.create_job(tune_job("NVIDIA H100 80GB HBM3", "softmax"));
  store.set_job_status(gemm[1], JobStatus::done);
  store.set_job_status(gemm[3], JobStatus::done);

  auto ids = [](const std::vector<JobRecord>& jobs) {
    std::vector<std::int64_t> out;
    for (const auto& j : jobs) out.push_back(j.id);
    return out;
  };
  EXPECT_EQ(ids(store.jobs({})),
            (std::vector<std::int64_t>{other, gemm[4], gemm[3], gemm[2], gemm[1], gemm[0]}));
  EXPECT_EQ(ids(store.jobs(filter("softmax"))), std::vector<std::int64_t>{other});
  EXPECT_EQ(ids(store.jobs(filter("gemm", JobStatus::done))),
            (std::vector<std::int64_t>{gemm[3], gemm[1]}));
  EXPECT_EQ(ids(store.jobs(filter("gemm", std::nullopt, 2, 1))),
            (std::vector<std::int64_t>{gemm[3], gemm[2]}));
  EXPECT_TRUE(store.jobs(filter("gemm", std::nullopt, 2, 10)).empty());
  EXPECT_EQ(store.jobs(filter("", std::nullopt, -1)).size(), 6u);
  EXPECT_TRUE(store.jobs(filter("nope")).empty());
}

TEST_P(StoreTest, CancelStopsAQueuedJobAtOnceAndFlagsARunningOne) {
  Store store(db_path());
  const auto queued = store.create_job(tune_job());
  plan(store, queued, 3);
  EXPECT_TRUE(store.request_cancel(queued));
  auto job = store.job(queued);
  EXPECT_EQ(job->status, JobStatus::cancelled);
  EXPECT_TRUE(job->cancel_requested);
  EXPECT_TRUE(is_iso8601_utc(job->finished_at));
  EXPECT_EQ(store.progress(queued).by_status.at("cancelled"), 3);
  EXPECT_FALSE(store.request_cancel(queued));  // already final

  const auto running = store.create_job(tune_job());
  store.set_job_status(running, JobStatus::running);
  EXPECT_TRUE(store.request_cancel(running));
  job = store.job(running);
  EXPECT_EQ(job->status, JobStatus::running);  // the runner finishes it
  EXPECT_TRUE(job->cancel_requested);

  const auto done = store.create_job(tune_job());
  store.set_job_status(done, JobStatus::done);
  EXPECT_FALSE(store.request_cancel(done));
  EXPECT_FALSE(store.job(done)->cancel_requested);
  EXPECT_FALSE(store.request_cancel(9999));
}

TEST_P(StoreTest, DevicesAreUpsertedByUuid) {
  Store store(db_path());
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.uuid = "GPU-1234";
  device.sm_major = 9;
  device.arch = "sm_90a";
  device.sm_count = 132;
  device.memory_bytes = 85'000'000'000;
  device.l2_bytes = 52'428'800;
  device.smem_per_block_optin = 232'448;
  device.smem_per_sm = 233'472;
  device.max_threads_per_block = 1024;
  device.regs_per_block = 65536;
  device.clock_khz = 1'980'000;
  device.driver_version = 13000;
  device.nvrtc_version = "13.0";
  const auto id = store.upsert_device(device);
  device.driver_version = 13010;
  EXPECT_EQ(store.upsert_device(device), id);

  const auto devices = store.devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(to_json(devices[0]), to_json(device));

  device.uuid = "GPU-5678";
  EXPECT_NE(store.upsert_device(device), id);
  EXPECT_EQ(store.devices().size(), 2u);
  device.uuid = "";
  EXPECT_THROW(store.upsert_device(device), std::invalid_argument);
}

TEST_P(StoreTest, EverythingSurvivesClosingAndReopening) {
  std::int64_t job_id = 0, variant_id = 0;
  {
    Store store(db_path());
    job_id = store.create_job(tune_job());
    store.set_job_status(job_id, JobStatus::running);
    variant_id = plan(store, job_id, 3)[1].id;
    store.record_outcome(variant_id, measured(9, 0.004));
    store.put_kernel({"k", "sm_90a", "kern", "13.0", {'a', '\0', 'b'}, "", {}});
  }
  Store store(db_path());
  EXPECT_EQ(store.job(job_id)->status, JobStatus::running);
  EXPECT_EQ(store.unfinished_jobs(), std::vector<std::int64_t>{job_id});
  EXPECT_EQ(store.variants(job_id).size(), 3u);
  EXPECT_EQ(store.variant(variant_id)->timing->median_us, 9);
  EXPECT_EQ(store.best("gemm", "bf16", kShapeKey, "")->variant.id, variant_id);
  EXPECT_EQ(store.find_kernel("k")->cubin, (std::vector<char>{'a', '\0', 'b'}));
}

TEST_P(StoreTest, NothingStoredIsLostWhenTheProcessIsKilled) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // No destructors, no checkpoint: the data lives only in the WAL when the process dies.
    try {
      Store store(db_path());
      const auto job = store.create_job(tune_job());
      const auto variants = plan(store, job, 2);
      store.record_outcome(variants[0].id, measured(3, 0.001));
    } catch (...) {
      _exit(2);  // never fall back into the test runner in the child
    }
    raise(SIGKILL);
    _exit(3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  Store store(db_path());
  const auto jobs = store.jobs({});
  ASSERT_EQ(jobs.size(), 1u);
  const auto variants = store.variants(jobs[0].id);
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].status, VariantStatus::measured);
  EXPECT_EQ(store.best("gemm", "bf16", kShapeKey, "")->variant.id, variants[0].id);
}

// Four writers record results for the same problem at once; afterwards every result is there
// and the stored front is exactly the front of all of them.

void expect_concurrent_writers_agree(const std::filesystem::path& path, bool store_per_thread) {
  constexpr int kThreads = 4, kVariants = 25;
  auto shared = std::make_unique<Store>(path);
  std::vector<std::thread> threads;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        std::unique_ptr<Store> own;
        if (store_per_thread) own = std::make_unique<Store>(path);
        Store& store = store_per_thread ? *own : *shared;
        const auto job = store.create_job(tune_job());
        store.set_job_status(job, JobStatus::running);
        std::vector<VariantRecord> plan;
        for (int i = 0; i < kVariants; ++i) plan.push_back(planned(i));
        const auto variants = store.plan_variants(job, plan);
        for (int i = 0; i < kVariants; ++i) {
          // Times and errors on a grid with trade-offs across threads.
          store.record_outcome(variants[i].id,
                               measured(1 + (i * 7 + t * 3) % 11, 0.001 * (1 + (i * 5 + t) % 13)));
          store.put_kernel({"k" + std::to_string(t * 100 + i),
                            "sm_90a",
                            "kern",
                            "13.0",
                            {'\0', static_cast<char>(i)},
                            "",
                            {}});
          store.progress(job);
        }
        store.set_job_status(job, JobStatus::done);
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& failure : failures) EXPECT_EQ(failure, "");

  std::vector<ParetoPoint> all;
  for (const auto& job : shared->jobs(filter("", std::nullopt, -1))) {
    EXPECT_EQ(job.status, JobStatus::done);
    const auto variants = shared->variants(job.id);
    EXPECT_EQ(variants.size(), static_cast<std::size_t>(kVariants));
    for (const auto& v : variants) {
      EXPECT_EQ(v.status, VariantStatus::measured);
      all.push_back({v.id, v.timing->median_us, v.error->max_rel, 0});
    }
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kVariants));
  std::vector<std::int64_t> expected;
  for (const auto& p : pareto_front(all)) expected.push_back(p.variant_id);
  EXPECT_EQ(ids_of(shared->pareto("gemm", "bf16", kShapeKey, "")), expected);
  EXPECT_TRUE(shared->find_kernel("k324"));
}

TEST_P(StoreTest, FourThreadsSharingOneStoreDoNotCorruptIt) {
  expect_concurrent_writers_agree(db_path(), false);
}

TEST_P(StoreTest, FourConnectionsWritingOneFileWaitForEachOther) {
  expect_concurrent_writers_agree(db_path(), true);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
