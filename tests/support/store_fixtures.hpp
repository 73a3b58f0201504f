// Helpers for the store's tests: a fixture with a fresh database path, and records shaped like
// the runner's (a tune job for 4096^3 bf16 GEMM, planned variants, measured outcomes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/connection.hpp"
#include "db/store.hpp"
#include "support/postgres_cluster.hpp"
#include "support/test_paths.hpp"

namespace kt::test {

inline const Shape kShape{{"M", 4096}, {"N", 4096}, {"K", 4096}};
inline const std::string kShapeKey = canonical_key(kShape);

inline NewJob tune_job(const std::string& device_name = "NVIDIA H100 80GB HBM3",
                       const std::string& family = "gemm") {
  NewJob job;
  job.family = family;
  job.shape = kShape;
  job.dtype = "bf16";
  job.mode = JobMode::tune;
  job.arch = "sm_90a";
  job.device_uuid = "GPU-" + device_name;
  job.device_name = device_name;
  return job;
}

inline VariantRecord planned(std::int64_t bm, VariantStatus status = VariantStatus::pending,
                             const std::string& reason = "") {
  VariantRecord v;
  v.template_name = "gemm_mma";
  v.config = {{"BM", bm}, {"BN", 128}, {"STAGES", 3}};
  v.status = status;
  v.reason = reason;
  if (status == VariantStatus::pruned) v.failed_gate = "constraints";
  return v;
}

inline VariantOutcome measured(double median_us, double max_rel) {
  VariantOutcome outcome;
  outcome.status = VariantStatus::measured;
  TimingSummary timing;
  timing.median_us = median_us;
  timing.min_us = median_us * 0.9;
  timing.p10_us = median_us * 0.95;
  timing.p90_us = median_us * 1.05;
  timing.mean_us = median_us;
  timing.rel_noise = 0.001;
  timing.trials = 50;
  timing.converged = true;
  outcome.timing = timing;
  ErrorSummary error;
  error.max_abs = max_rel * 10;
  error.max_rel = max_rel;
  error.rel_l2 = max_rel / 2;
  outcome.error = error;
  outcome.tflops = 500;
  outcome.gbps = 100;
  return outcome;
}

// A successful compile leaving footprint = smem + 4 * registers * threads.
inline CompileResult compiled(int registers, int static_smem) {
  CompileResult result;
  result.ok = true;
  result.log = "ptxas info: Used " + std::to_string(registers) + " registers";
  result.key = "key-" + std::to_string(registers);
  result.resources.registers = registers;
  result.resources.static_smem_bytes = static_smem;
  result.resources.spill_store_bytes = 4;
  result.resources.spill_load_bytes = 8;
  result.compile_ms = 12.5;
  return result;
}

inline std::vector<std::int64_t> ids_of(const std::vector<VariantRecord>& variants) {
  std::vector<std::int64_t> ids;
  for (const auto& v : variants) ids.push_back(v.id);
  return ids;
}

inline JobFilter filter(const std::string& family, std::optional<JobStatus> status = std::nullopt,
                        int limit = 50, int offset = 0) {
  JobFilter f;
  f.family = family;
  f.status = status;
  f.limit = limit;
  f.offset = offset;
  return f;
}

inline bool is_iso8601_utc(const std::string& text) {
  static const std::regex pattern(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  return std::regex_match(text, pattern);
}

// Plans BM = 1..count for a job and returns their records.
inline std::vector<VariantRecord> plan(Store& store, std::int64_t job_id, int count) {
  std::vector<VariantRecord> plan;
  for (int i = 1; i <= count; ++i) plan.push_back(planned(i));
  return store.plan_variants(job_id, plan);
}

// A fresh SQLite file per test.
class StoreFixture : public ::testing::Test {
 protected:
  std::filesystem::path db_path() const { return dir_.path() / "kerntune.db"; }
  std::vector<VariantRecord> plan(Store& store, std::int64_t job_id, int count) {
    return test::plan(store, job_id, count);
  }

  TempDir dir_;
};

// The store's tests that hold for every backend run once per backend: db_path() is a fresh SQLite
// file, or a fresh database of the process's throw-away PostgreSQL cluster (support/
// postgres_cluster.hpp; missing PostgreSQL fails these tests rather than skipping them).
class StoreBackendFixture : public ::testing::TestWithParam<db::Dialect> {
 protected:
  void SetUp() override {
    location_ = GetParam() == db::Dialect::sqlite ? (dir_.path() / "kerntune.db").string()
                                                  : PostgresCluster::shared().create_database();
  }
  std::filesystem::path db_path() const { return location_; }
  std::vector<VariantRecord> plan(Store& store, std::int64_t job_id, int count) {
    return test::plan(store, job_id, count);
  }
  // The first column of the query's first row, read through a connection of the test's own.
  std::int64_t query_int(const std::string& sql) const {
    auto db = db::open_connection(location_, db::Access::read);
    db::Statement query(*db, sql);
    if (!query.step()) throw std::runtime_error("no row from: " + sql);
    return query.column(0).int64();
  }
  std::string query_text(const std::string& sql) const {
    auto db = db::open_connection(location_, db::Access::read);
    db::Statement query(*db, sql);
    if (!query.step()) throw std::runtime_error("no row from: " + sql);
    return query.column(0).text();
  }
  // Runs statements behind the store's back (a row no release would write, ...).
  void execute(const std::string& sql) const {
    db::open_connection(location_, db::Access::write)->execute_script(sql);
  }

  TempDir dir_;
  std::string location_;
};

inline std::string backend_name(const ::testing::TestParamInfo<db::Dialect>& info) {
  return info.param == db::Dialect::sqlite ? "SQLite" : "PostgreSQL";
}

// INSTANTIATE_TEST_SUITE_P(Backends, SuiteName, kt::test::kStoreBackends, kt::test::backend_name)
inline const auto kStoreBackends = ::testing::Values(db::Dialect::sqlite, db::Dialect::postgresql);

}  // namespace kt::test
