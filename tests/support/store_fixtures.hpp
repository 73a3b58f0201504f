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

#include "db/store.hpp"
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

class StoreFixture : public ::testing::Test {
 protected:
  std::filesystem::path db_path() const { return dir_.path() / "kerntune.db"; }

  // Plans BM = 1..count for a job and returns their records.
  std::vector<VariantRecord> plan(Store& store, std::int64_t job_id, int count) {
    std::vector<VariantRecord> plan;
    for (int i = 1; i <= count; ++i) plan.push_back(planned(i));
    return store.plan_variants(job_id, plan);
  }

  TempDir dir_;
};

}  // namespace kt::test
