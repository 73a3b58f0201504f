#include "worker/interleaved_measurement.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "worker/cuda_module.hpp"
#include "worker/driver_api.hpp"
#include "worker/kernel_launch.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/statistics.hpp"
#include "worker/throttle_filter.hpp"
#include "worker/timed_work.hpp"
#include "worker/timing.hpp"
#include "worker/winner_comparison.hpp"

namespace kt {
namespace {

// One candidate, loaded and ready to launch on its own buffers.
class Candidate {
 public:
  Candidate(WorkerDevice& device, const MeasureRequest& request)
      : request_(request),
        module_(cuda::read_binary_file(request.cubin_path)),
        function_(module_.function(request.kernel)),
        buffers_(request.full.buffers),
        args_(request.full.args, buffers_) {
    const LaunchDims& launch = request.full.launch;
    KT_CU(cuFuncSetAttribute, function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(launch.dynamic_smem));
    if (std::int64_t{launch.cluster[0]} * launch.cluster[1] * launch.cluster[2] > 8)
      KT_CU(cuFuncSetAttribute, function_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    buffers_.prepare(device.support, request.seed, device.stream.get());
  }

  // Warm-up, estimate, events or graph; the timing options of the whole re-measure.
  void prepare_timing(WorkerDevice& device, const TimingOptions& options) {
    work_.emplace(
        [this](CUstream stream) { launch_kernel(function_, request_.full.launch, args_, stream); },
        options, device.stream.get(), &device.flusher);
  }

  std::int64_t id() const { return request_.variant_id; }
  TimedWork& work() { return *work_; }
  ThrottleFilter& filter() { return filter_; }

 private:
  const MeasureRequest& request_;
  cuda::Module module_;
  CUfunction function_;
  ProblemBuffers buffers_;
  KernelArguments args_;
  std::optional<TimedWork> work_;
  ThrottleFilter filter_;
};

}  // namespace

InterleavedResult measure_interleaved(WorkerDevice& device, const InterleavedRequest& request) {
  if (request.candidates.empty()) throw std::invalid_argument("interleaved request: no candidates");
  const TimingOptions& options = request.timing;
  std::vector<std::unique_ptr<Candidate>> candidates;
  for (const MeasureRequest& c : request.candidates)
    candidates.push_back(std::make_unique<Candidate>(device, c));
  for (auto& c : candidates) c->prepare_timing(device, options);

  // The time cap covers all candidates: each gets max_seconds of trials on average.
  StopRule rule = stop_rule_from(options);
  rule.max_seconds *= static_cast<double>(candidates.size());
  const StopCriterion criterion(rule);
  std::vector<StopReason> reasons(candidates.size(), StopReason::keep_going);
  ClockReading before = read_clock(device.clocks.get());
  const auto begin = std::chrono::steady_clock::now();
  for (bool done = false; !done;) {
    for (auto& c : candidates) {  // one round: A B C
      const double sample_us = c->work().sample(options.flush_l2);
      const ClockReading after = read_clock(device.clocks.get());
      c->filter().add(sample_us, before, after);
      before = after;
    }
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    done = true;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const ThrottleFilter& f = candidates[i]->filter();
      reasons[i] = criterion.evaluate(f.kept(), f.attempts(), elapsed);
      if (reasons[i] == StopReason::keep_going) done = false;
    }
  }

  std::vector<std::int64_t> ids;
  std::vector<std::vector<double>> samples;
  std::vector<TimingSummary> timings;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = *candidates[i];
    const auto kept = c.filter().samples_to_summarize();
    samples.emplace_back(kept.begin(), kept.end());
    TimingSummary t = summarize(samples.back(),
                                reasons[i] == StopReason::converged && !c.filter().kept().empty());
    t.method = c.work().method();
    t.launches_per_sample = c.work().launches_per_sample();
    c.filter().annotate(t);
    ids.push_back(c.id());
    timings.push_back(t);
  }
  InterleavedResult result = compare_candidates(ids, samples);
  result.variant_ids = std::move(ids);
  result.timings = std::move(timings);
  return result;
}

}  // namespace kt
