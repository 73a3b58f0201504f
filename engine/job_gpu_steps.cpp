#include "engine/job_gpu_steps.hpp"

#include <algorithm>
#include <fstream>

#include <spdlog/spdlog.h>

namespace kt {

std::filesystem::path materialize_cubin(const std::filesystem::path& dir,
                                        const CompiledVariant& cv) {
  std::filesystem::create_directories(dir);
  const auto path = dir / (cv.kernel_key + ".cubin");
  if (std::filesystem::exists(path)) return path;
  // Lanes of several GPUs may write the same kernel at once: each writes its own partial file.
  const auto partial = dir / (cv.kernel_key + ".cubin.partial." + std::to_string(cv.variant_id));
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(cv.cubin.data(), static_cast<std::streamsize>(cv.cubin.size()));
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, path);
  return path;
}

std::uint64_t mix_seed(std::uint64_t seed, std::int64_t variant_id) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(variant_id) * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return (x ^ (x >> 29)) | 1;
}

std::chrono::milliseconds fallback_watchdog(const SchedulerOptions& options) {
  const auto timing_ms = static_cast<long long>(options.timing.max_seconds * 3000.0);
  return options.min_watchdog + std::chrono::milliseconds(timing_ms);
}

MeasureRequest measure_request(const CompiledVariant& cv, const JobRecord& job,
                               const Tolerance& tolerance, const SchedulerOptions& options,
                               std::uint64_t seed) {
  MeasureRequest request;
  request.variant_id = cv.variant_id;
  request.cubin_path = materialize_cubin(options.work_dir, cv).string();
  request.kernel = cv.kernel;
  request.smoke = cv.smoke;
  request.full = cv.full;
  request.tolerance = tolerance;
  request.seed = mix_seed(seed, cv.variant_id);
  request.timing = options.timing;
  request.reference_us = job.reference_us.value_or(0);
  return request;
}

VariantOutcome outcome_of(const MeasureResult& result, const ProblemInstance& problem,
                          std::optional<double> reference_us) {
  VariantOutcome outcome;
  outcome.status = result.status;
  outcome.failed_gate = result.failed_gate;
  outcome.reason = result.reason;
  outcome.error = result.error;
  outcome.timing = result.timing;
  if (result.status == VariantStatus::measured && result.timing && result.timing->median_us > 0) {
    const double seconds = result.timing->median_us * 1e-6;
    outcome.tflops = problem.flops / seconds / 1e12;
    outcome.gbps = problem.bytes / seconds / 1e9;
    if (reference_us) outcome.speedup = *reference_us / result.timing->median_us;
  }
  return outcome;
}

MeasuredVariant measure_variant(WorkerClient& worker, const DeviceInfo& device,
                                const MeasureRequest& request, const CompiledVariant& cv,
                                std::optional<double> reference_us, const SchedulerOptions& options,
                                JobTimeline& timeline) {
  const auto start = JobTimeline::Clock::now();
  const MeasureResult result = worker.measure(request, fallback_watchdog(options));
  const auto end = JobTimeline::Clock::now();
  timeline.record(start, end);

  MeasuredVariant measured;
  measured.variant_id = cv.variant_id;
  measured.outcome = outcome_of(result, cv.full, reference_us);
  measured.registers = result.registers;
  measured.smem_bytes =
      result.static_smem_bytes >= 0
          ? result.static_smem_bytes + static_cast<int>(cv.full.launch.dynamic_smem)
          : -1;
  measured.gpu_ordinal = device.ordinal;
  measured.measure_ms = std::chrono::duration<double, std::milli>(end - start).count();
  const VariantOutcome& outcome = measured.outcome;
  if (outcome.status == VariantStatus::measured)
    spdlog::info("variant {} on GPU {}: {:.1f} us ({:.1f} TFLOP/s), worker {:.0f} ms",
                 cv.variant_id, device.ordinal, outcome.timing->median_us, outcome.tflops,
                 measured.measure_ms);
  else
    spdlog::info("variant {} on GPU {}: {}: {}", cv.variant_id, device.ordinal,
                 to_string(outcome.status), outcome.reason);
  return measured;
}

std::vector<VariantRecord> final_candidates(std::vector<VariantRecord> variants,
                                            std::size_t count) {
  std::erase_if(variants, [](const VariantRecord& v) {
    return v.status != VariantStatus::measured || !v.timing || v.timing->median_us <= 0;
  });
  std::sort(variants.begin(), variants.end(), [](const VariantRecord& a, const VariantRecord& b) {
    if (a.timing->median_us != b.timing->median_us)
      return a.timing->median_us < b.timing->median_us;
    return a.id < b.id;
  });
  if (variants.size() > count) variants.resize(count);
  return variants;
}

}  // namespace kt
