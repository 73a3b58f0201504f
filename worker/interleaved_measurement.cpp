#include "worker/interleaved_measurement.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

#include "worker/baseline.hpp"
#include "worker/cuda_module.hpp"
#include "worker/driver_api.hpp"
#include "worker/graph_batching.hpp"
#include "worker/kernel_launch.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/statistics.hpp"
#include "worker/throttle_filter.hpp"
#include "worker/timed_work.hpp"
#include "worker/timing.hpp"
#include "worker/winner_comparison.hpp"

namespace kt {
namespace {

// One side of the rounds: something to launch on its own buffers, its timed work and its samples.
class Side {
 public:
  virtual ~Side() = default;
  virtual void launch(CUstream stream) = 0;

  // Warm-up and a first estimate, no graph yet (the method is chosen for all sides together).
  void prepare_timing(WorkerDevice& device, const TimingOptions& options) {
    work_.emplace([this](CUstream stream) { launch(stream); }, options, device.stream.get(),
                  &device.flusher, /*allow_graph=*/false);
  }

  TimedWork& work() { return *work_; }
  ThrottleFilter& filter() { return filter_; }

 private:
  std::optional<TimedWork> work_;
  ThrottleFilter filter_;
};

// A validated variant, loaded again.
class Candidate final : public Side {
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

  void launch(CUstream stream) override {
    launch_kernel(function_, request_.full.launch, args_, stream);
  }
  std::int64_t id() const { return request_.variant_id; }

 private:
  const MeasureRequest& request_;
  cuda::Module module_;
  CUfunction function_;
  ProblemBuffers buffers_;
  KernelArguments args_;
};

// The family's baseline on its own buffers.
class BaselineSide final : public Side {
 public:
  BaselineSide(WorkerDevice& device, const ProblemInstance& problem, std::uint64_t seed)
      : buffers_(problem.buffers) {
    buffers_.prepare(device.support, seed, device.stream.get());
    baseline_ = make_baseline(problem, buffers_, device);
  }

  void launch(CUstream stream) override { baseline_->launch(stream); }
  nlohmann::json describe() const { return baseline_->describe(); }

 private:
  ProblemBuffers buffers_;
  std::unique_ptr<Baseline> baseline_;
};

// One method for every side: a graph of the same launch count when the shortest side needs one.
void choose_common_method(const std::vector<Side*>& sides, const TimingOptions& options) {
  double shortest_us = 0;
  for (Side* side : sides) {
    const double estimate = side->work().estimate_us();
    if (estimate > 0 && (shortest_us == 0 || estimate < shortest_us)) shortest_us = estimate;
  }
  const int launches = launches_per_graph(shortest_us, options);
  if (launches <= 1) return;  // constructed with events already
  for (Side* side : sides) {
    if (side->work().set_launches_per_sample(launches)) continue;
    spdlog::warn("interleaved: a side could not run as a graph; every side uses events");
    for (Side* other : sides) other->work().set_launches_per_sample(1);
    return;
  }
}

}  // namespace

InterleavedResult measure_interleaved(WorkerDevice& device, const InterleavedRequest& request) {
  if (request.candidates.empty()) throw std::invalid_argument("interleaved request: no candidates");
  const TimingOptions& options = request.timing;
  std::vector<std::unique_ptr<Candidate>> candidates;
  for (const MeasureRequest& c : request.candidates)
    candidates.push_back(std::make_unique<Candidate>(device, c));
  std::unique_ptr<BaselineSide> baseline;
  if (request.baseline)
    baseline = std::make_unique<BaselineSide>(device, *request.baseline, request.baseline_seed);

  std::vector<Side*> sides;  // the order of every round: the candidates, then the baseline
  for (auto& c : candidates) sides.push_back(c.get());
  if (baseline) sides.push_back(baseline.get());
  for (Side* side : sides) side->prepare_timing(device, options);
  choose_common_method(sides, options);

  // The time cap covers all sides: each gets max_seconds of trials on average.
  StopRule rule = stop_rule_from(options);
  rule.max_seconds *= static_cast<double>(sides.size());
  const StopCriterion criterion(rule);
  std::vector<StopReason> reasons(sides.size(), StopReason::keep_going);
  ClockReading before = read_clock(device.clocks.get());
  const auto begin = std::chrono::steady_clock::now();
  for (bool done = false; !done;) {
    for (Side* side : sides) {  // one round: A B C ... baseline
      const double sample_us = side->work().sample(options.flush_l2);
      const ClockReading after = read_clock(device.clocks.get());
      side->filter().add(sample_us, before, after);
      before = after;
    }
    const auto elapsed = std::chrono::steady_clock::now() - begin;
    done = true;
    for (std::size_t i = 0; i < sides.size(); ++i) {
      const ThrottleFilter& f = sides[i]->filter();
      reasons[i] = criterion.evaluate(f.kept(), f.attempts(), elapsed);
      if (reasons[i] == StopReason::keep_going) done = false;
    }
  }

  std::vector<std::vector<double>> samples;
  std::vector<TimingSummary> timings;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    Side& side = *sides[i];
    const auto kept = side.filter().samples_to_summarize();
    samples.emplace_back(kept.begin(), kept.end());
    TimingSummary t = summarize(
        samples.back(), reasons[i] == StopReason::converged && !side.filter().kept().empty());
    t.method = side.work().method();
    t.launches_per_sample = side.work().launches_per_sample();
    side.filter().annotate(t);
    timings.push_back(t);
  }
  std::vector<std::int64_t> ids;
  for (const auto& c : candidates) ids.push_back(c->id());
  std::optional<TimingSummary> baseline_timing;
  std::vector<double> baseline_samples;
  if (baseline) {
    baseline_timing = timings.back();
    baseline_samples = std::move(samples.back());
    timings.pop_back();
    samples.pop_back();
  }
  InterleavedResult result = compare_candidates(ids, samples);
  result.variant_ids = std::move(ids);
  result.timings = std::move(timings);
  if (baseline) {
    result.baseline_timing = baseline_timing;
    result.baseline = baseline->describe();
    result.speedups = speedups_over_baseline(samples, baseline_samples);
  }
  return result;
}

}  // namespace kt
