// kt_seed_store: writes a store file with finished jobs and measured variants, as a GPU run
// would leave them, for the history page's browser test and for screenshots on a machine
// without a GPU. Deterministic: the same counts and figures every run (the browser test checks
// the plots against them). Usage: kt_seed_store DB_FILE; prints the seeded job ids as JSON.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "tuner/config.hpp"
#include "tuner/interleaved_protocol.hpp"

namespace {

// The main job's variants by outcome; the browser test reads these from the printed summary.
constexpr int kMeasured = 40;
constexpr int kCompileErrors = 4;
constexpr int kWrongResults = 3;
constexpr int kResourceExceeded = 2;
constexpr int kHangs = 1;
constexpr int kPruned = 10;

// A small linear congruential generator: the same sequence on every platform.
class Sequence {
 public:
  double next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53);
  }

 private:
  std::uint64_t state_ = 42;
};

kt::VariantRecord planned(int index) {
  static const std::int64_t tiles[] = {64, 128, 256};
  kt::VariantRecord v;
  v.template_name = index % 3 == 0 ? "mma_multistage_cluster" : "mma_multistage";
  v.config = {{"BM", tiles[index % 3]},
              {"BN", tiles[(index / 3) % 3]},
              {"BK", 32 << (index % 2)},
              {"STAGES", 2 + (index / 9) % 4},
              {"K_ORDER", index / 36}};
  return v;
}

kt::CompileResult compiled(Sequence& random, int index) {
  kt::CompileResult result;
  result.ok = true;
  result.resources.registers = 64 + static_cast<int>(random.next() * 160);
  result.resources.static_smem_bytes = 16384 * (1 + index % 6);
  result.log = "ptxas info    : Used " + std::to_string(result.resources.registers) +
               " registers, " + std::to_string(result.resources.static_smem_bytes) + " bytes smem";
  result.key = "seed-kernel-" + std::to_string(index);
  result.compile_ms = 800 + random.next() * 1500;
  return result;
}

kt::VariantOutcome measured(Sequence& random, double reference_us) {
  kt::VariantOutcome outcome;
  outcome.status = kt::VariantStatus::measured;
  kt::TimingSummary timing;
  timing.median_us = reference_us * (0.85 + random.next() * 0.9);
  timing.min_us = timing.median_us * 0.98;
  timing.p10_us = timing.median_us * 0.99;
  timing.p90_us = timing.median_us * 1.02;
  timing.mean_us = timing.median_us * 1.001;
  timing.rel_noise = 0.002;
  timing.trials = 60;
  timing.converged = true;
  timing.sm_clock_mhz = 1980;
  outcome.timing = timing;
  kt::ErrorSummary error;
  error.max_rel = 1e-3 * std::pow(10.0, random.next() * 1.5);
  error.max_abs = error.max_rel * 4;
  error.rel_l2 = error.max_rel / 5;
  error.first_bad_index = -1;
  outcome.error = error;
  outcome.tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (timing.median_us * 1e6);
  outcome.gbps = 3.0 * 4096.0 * 4096.0 * 2.0 / (timing.median_us * 1e3);
  return outcome;
}

kt::VariantOutcome failed(kt::VariantStatus status, const std::string& gate,
                          const std::string& reason) {
  kt::VariantOutcome outcome;
  outcome.status = status;
  outcome.failed_gate = gate;
  outcome.reason = reason;
  return outcome;
}

kt::NewJob gemm_job(std::int64_t m, const std::string& dtype, const std::string& device) {
  kt::NewJob job;
  job.family = "gemm";
  job.shape = {{"M", m}, {"N", m}, {"K", m}};
  job.dtype = dtype;
  job.mode = kt::JobMode::tune;
  job.arch = device.find("B200") != std::string::npos ? "sm_100a" : "sm_90a";
  job.device_uuid = "GPU-seed-" + std::to_string(device.size());
  job.device_name = device;
  return job;
}

// The final comparison a tune job ends with: its two fastest variants and the baseline
// re-measured interleaved (each keeps its first-pass median, so the front's order stays), the
// baseline 2% faster than in the first pass, speedups with a +-0.8% interval.
kt::InterleavedResult final_comparison(std::vector<std::pair<std::int64_t, double>> medians,
                                       double reference_us) {
  std::sort(medians.begin(), medians.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  kt::InterleavedResult result;
  kt::TimingSummary baseline;
  baseline.median_us = baseline.min_us = baseline.p10_us = baseline.p90_us = baseline.mean_us =
      reference_us * 0.98;
  baseline.trials = 16;
  baseline.converged = true;
  result.baseline_timing = baseline;
  result.baseline = {{"kind", "cublaslt_gemm"}, {"library", "seeded"}};
  for (std::size_t i = 0; i < 2 && i < medians.size(); ++i) {
    kt::TimingSummary timing = baseline;
    timing.median_us = timing.min_us = timing.p10_us = timing.p90_us = timing.mean_us =
        medians[i].second;
    const double speedup = baseline.median_us / timing.median_us;
    result.variant_ids.push_back(medians[i].first);
    result.timings.push_back(timing);
    result.speedups.push_back({speedup, speedup * 0.992, speedup * 1.008});
  }
  result.winner_variant_id = result.variant_ids.front();
  result.runner_up_variant_id = result.variant_ids.size() > 1 ? result.variant_ids[1] : 0;
  result.margin = medians.size() > 1 ? medians[1].second / medians[0].second - 1 : 0;
  result.distinguishable = result.margin > 0.01;
  result.reason = "seeded";
  return result;
}

// A finished tune job whose variants are all measured, with its final comparison.
std::int64_t seed_small_job(kt::Store& store, Sequence& random, const kt::NewJob& job, int count,
                            double reference_us) {
  const std::int64_t id = store.create_job(job);
  store.set_job_status(id, kt::JobStatus::running);
  store.set_job_reference(id, reference_us);
  std::vector<kt::VariantRecord> plan;
  for (int i = 0; i < count; ++i) plan.push_back(planned(i));
  std::vector<std::pair<std::int64_t, double>> medians;
  for (const auto& v : store.plan_variants(id, plan)) {
    store.record_compile(v.id, compiled(random, static_cast<int>(v.id)), 128, 0);
    const kt::VariantOutcome outcome = measured(random, reference_us);
    medians.emplace_back(v.id, outcome.timing->median_us);
    store.record_outcome(v.id, outcome);
  }
  store.record_winner_comparison(id, final_comparison(medians, reference_us));
  store.set_job_status(id, kt::JobStatus::done);
  return id;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kt_seed_store DB_FILE (a new file)\n";
    return 1;
  }
  const std::filesystem::path db = argv[1];
  if (std::filesystem::exists(db)) {
    std::cerr << "kt_seed_store: " << db.string() << " exists; give a new file\n";
    return 1;
  }
  kt::Store store(db);
  Sequence random;

  const std::string h100 = "NVIDIA H100 80GB HBM3";
  const std::string b200 = "NVIDIA B200";
  const std::int64_t small = seed_small_job(store, random, gemm_job(2048, "bf16", h100), 12, 120);
  const std::int64_t other_gpu =
      seed_small_job(store, random, gemm_job(4096, "bf16", b200), 10, 520);

  // The main job: every kind of outcome, in an interleaved plan order.
  const double reference_us = 909.1;
  kt::NewJob main_request = gemm_job(4096, "bf16", h100);
  // Tuned with other family sources than the shipped ones: the daemon shows its results stale.
  main_request.family_hash = std::string(64, 'a');
  // Seeded from the small job's shape, as a warm-started search records it.
  const std::string small_key = kt::canonical_key({{"M", 2048}, {"N", 2048}, {"K", 2048}});
  main_request.warm_start_json = nlohmann::json{
      {"from", {{{"shape_key", small_key}, {"distance", 0.6931}, {"job_id", small}}}},
      {"seeds",
       {{{"template", planned(0).template_name},
         {"config", planned(0).config},
         {"shape_key", small_key},
         {"median_us", 118.5}}}}}.dump();
  const std::int64_t main_job = store.create_job(main_request);
  store.set_job_status(main_job, kt::JobStatus::running);
  store.set_job_reference(main_job, reference_us);
  std::vector<kt::VariantRecord> plan;
  std::vector<kt::VariantStatus> outcomes;
  const auto add = [&](int count, kt::VariantStatus status) {
    for (int i = 0; i < count; ++i) outcomes.push_back(status);
  };
  add(kMeasured, kt::VariantStatus::measured);
  add(kCompileErrors, kt::VariantStatus::compile_error);
  add(kWrongResults, kt::VariantStatus::wrong_result);
  add(kResourceExceeded, kt::VariantStatus::resource_exceeded);
  add(kHangs, kt::VariantStatus::hang);
  // Spread the failures through the measured ones (a stride coprime with the count).
  std::vector<kt::VariantStatus> ordered;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    ordered.push_back(outcomes[(i * 7) % outcomes.size()]);
  for (std::size_t i = 0; i < ordered.size(); ++i) plan.push_back(planned(static_cast<int>(i)));
  // Pruned configurations are stored as counts per constraint, as the planner leaves them.
  kt::PrunedGroup pruned;
  pruned.template_name = "mma_multistage";
  pruned.reason = "constraint failed: STAGES*(BM+BN)*BK*elem_bytes <= smem_per_block_optin";
  pruned.count = kPruned;
  pruned.examples = {{{"BM", 256}, {"BN", 256}, {"BK", 64}, {"STAGES", 5}}};
  const auto variants = store.plan_variants(main_job, plan, {pruned});
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const kt::VariantRecord& v = variants[i];
    switch (ordered[i]) {
      case kt::VariantStatus::compile_error: {
        kt::CompileResult error;
        error.log =
            "kernel.cu(212): error: identifier \"wgmma_fence\" is undefined\n"
            "1 error detected in the compilation of \"gemm_mma.cu\".";
        store.record_compile(v.id, error, 128, 0);
        store.record_outcome(v.id, failed(kt::VariantStatus::compile_error, "compile",
                                          "NVRTC failed (see the compile log)"));
        break;
      }
      case kt::VariantStatus::wrong_result: {
        store.record_compile(v.id, compiled(random, static_cast<int>(v.id)), 128, 0);
        kt::VariantOutcome outcome = failed(kt::VariantStatus::wrong_result, "validate",
                                            "max_rel 0.41 above the tolerance 0.02");
        kt::ErrorSummary error;
        error.max_rel = 0.41;
        error.max_abs = 3.2;
        error.rel_l2 = 0.2;
        error.first_bad_index = 4097;
        outcome.error = error;
        store.record_outcome(v.id, outcome);
        break;
      }
      case kt::VariantStatus::resource_exceeded:
        store.record_compile(v.id, compiled(random, static_cast<int>(v.id)), 1024, 240000);
        store.record_outcome(v.id, failed(kt::VariantStatus::resource_exceeded, "resources",
                                          "needs 240000 B shared memory; the GPU gives 232448"));
        break;
      case kt::VariantStatus::hang:
        store.record_compile(v.id, compiled(random, static_cast<int>(v.id)), 128, 0);
        store.record_outcome(v.id, failed(kt::VariantStatus::hang, "measure",
                                          "no answer within 10 s: the worker was replaced"));
        break;
      default:
        store.record_compile(v.id, compiled(random, static_cast<int>(v.id)), 128, 0);
        store.record_outcome(v.id, measured(random, reference_us));
        store.record_worker_time(v.id, 0, 120 + 10 * static_cast<double>(i % 5));
    }
  }
  store.set_job_gpus(main_job, 1);
  store.set_job_timing(main_job, 95.2, 60.5);
  store.set_job_status(main_job, kt::JobStatus::done);

  // A failed job, so the list shows more than one status.
  const std::int64_t failed_job = store.create_job(gemm_job(8192, "fp16", h100));
  store.set_job_status(failed_job, kt::JobStatus::failed, "worker could not start: no GPU");

  nlohmann::json summary = {{"main_job", main_job},
                            {"small_job", small},
                            {"other_gpu_job", other_gpu},
                            {"failed_job", failed_job},
                            {"main_job_outcomes",
                             {{"measured", kMeasured},
                              {"compile_error", kCompileErrors},
                              {"wrong_result", kWrongResults},
                              {"resource_exceeded", kResourceExceeded},
                              {"hang", kHangs},
                              {"pruned", kPruned}}},
                            {"main_job_total", static_cast<int>(ordered.size()) + kPruned},
                            {"main_job_stale_key", "family_hash"},
                            {"main_job_warm_start_from", small}};
  std::cout << summary.dump() << std::endl;
  return 0;
}
