// Finished tune jobs seeded the way the runner records them, for the tests of /v1/best's answer
// (issue 14): a job whose one measured variant met the baseline in the final comparison, and a
// job none of whose variants was measured but whose baseline was timed.
#pragma once

#include <cstdint>

#include "db/store.hpp"
#include "support/store_fixtures.hpp"

namespace kt::test {

// cublasLt as the worker describes it: algorithm `index` of the heuristic's 8, timed on a GPU.
inline nlohmann::json cublaslt_description(int index) {
  return {{"kind", "cublaslt_gemm"},
          {"library", "cublasLt 130100"},
          {"workspace_limit_bytes", 33554432},
          {"heuristic_algorithms", 8},
          {"algorithm_index", index},
          {"chosen_by", "timing each on this GPU"},
          {"algorithm", {{"id", 66}, {"tile", 24}, {"stages", 35}, {"split_k", 1}}}};
}

inline BaselineTiming cublaslt_timing(double median_us, int index) {
  BaselineTiming baseline;
  baseline.timing = measured(median_us, 0).timing.value();
  baseline.baseline = cublaslt_description(index);
  return baseline;
}

struct ComparedJob {
  std::int64_t job_id = 0;
  std::int64_t variant_id = 0;
};

// A done tune job of `shape` on an H100: one variant measured at first_pass_us (GPU 0, whose
// baseline took baseline_us), then the final comparison: ours final_us against the baseline's
// baseline_us, ratio `speedup` (baseline / ours with its interval).
inline ComparedJob seed_compared_job(Store& store, const Shape& shape, double first_pass_us,
                                     double final_us, double baseline_us, Speedup speedup) {
  NewJob spec = tune_job();
  spec.shape = shape;
  ComparedJob seeded;
  seeded.job_id = store.create_job(spec);
  store.set_job_status(seeded.job_id, JobStatus::running);
  store.record_job_baseline(seeded.job_id, 0, cublaslt_timing(baseline_us, 3));
  VariantRecord plan;
  plan.template_name = "wgmma_tma_ws";
  plan.config = {{"BM", 128}, {"BN", 256}, {"STAGES", 3}};
  plan.config_key = canonical_key(plan.config);
  seeded.variant_id = store.plan_variants(seeded.job_id, {plan}).front().id;
  store.record_worker_time(seeded.variant_id, 0, 12.0);
  VariantOutcome outcome = measured(first_pass_us, 0.001);
  outcome.speedup = baseline_us / first_pass_us;
  store.record_outcome(seeded.variant_id, outcome);

  InterleavedResult final;
  final.variant_ids = {seeded.variant_id};
  final.timings = {measured(final_us, 0).timing.value()};
  final.winner_variant_id = seeded.variant_id;
  final.baseline_timing = measured(baseline_us, 0).timing.value();
  final.baseline = cublaslt_description(3);
  final.speedups = {speedup};
  store.record_winner_comparison(seeded.job_id, final);
  store.set_job_status(seeded.job_id, JobStatus::done);
  return seeded;
}

// A done tune job of `shape` on an H100 whose variants were all pruned: only its baseline, timed
// alone on GPU 0, is stored.
inline std::int64_t seed_baseline_only_job(Store& store, const Shape& shape, double baseline_us) {
  NewJob spec = tune_job();
  spec.shape = shape;
  const std::int64_t job_id = store.create_job(spec);
  store.set_job_status(job_id, JobStatus::running);
  store.record_job_baseline(job_id, 0, cublaslt_timing(baseline_us, 1));
  store.set_job_status(job_id, JobStatus::done);
  return job_id;
}

// A done tune job of `shape` on an H100 whose baseline failed validation with every candidate on
// GPU 0 (recorded as the runner does), and whose one variant was measured at variant_us with no
// speedup and no final-comparison baseline: the job went on against the reference alone.
inline ComparedJob seed_baseline_failed_job(Store& store, const Shape& shape, double variant_us,
                                            const std::string& why) {
  NewJob spec = tune_job();
  spec.shape = shape;
  ComparedJob seeded;
  seeded.job_id = store.create_job(spec);
  store.set_job_status(seeded.job_id, JobStatus::running);
  store.record_job_baseline_failure(seeded.job_id, 0, why, cublaslt_description(7));
  VariantRecord plan;
  plan.template_name = "wgmma_tma_ws";
  plan.config = {{"BM", 128}, {"BN", 128}, {"STAGES", 4}};
  plan.config_key = canonical_key(plan.config);
  seeded.variant_id = store.plan_variants(seeded.job_id, {plan}).front().id;
  store.record_worker_time(seeded.variant_id, 0, 12.0);
  store.record_outcome(seeded.variant_id, measured(variant_us, 0.001));
  InterleavedResult final;
  final.variant_ids = {seeded.variant_id};
  final.timings = {measured(variant_us, 0).timing.value()};
  final.winner_variant_id = seeded.variant_id;
  store.record_winner_comparison(seeded.job_id, final);
  store.set_job_status(seeded.job_id, JobStatus::done);
  return seeded;
}

}  // namespace kt::test
