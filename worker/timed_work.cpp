#include "worker/timed_work.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "worker/driver_api.hpp"
#include "worker/graph_batching.hpp"
#include "worker/statistics.hpp"

namespace kt {
namespace {

// Cold single-launch trials behind the events-or-graph decision (the median of them).
constexpr int kEstimateTrials = 3;

}  // namespace

TimedWork::TimedWork(LaunchFn launch, const TimingOptions& options, CUstream stream,
                     cuda::L2Flusher* flusher, bool allow_graph)
    : launch_(std::move(launch)), stream_(stream), flusher_(flusher) {
  for (int i = 0; i < options.warmup_runs; ++i) launch_(stream_);
  KT_CU(cuStreamSynchronize, stream_);  // a fault in warm-up surfaces here, not in a trial
  std::vector<double> estimates;
  for (int i = 0; i < kEstimateTrials; ++i)
    estimates.push_back(time_enqueued([&] { launch_(stream_); }, options.flush_l2));
  estimate_us_ = median(estimates);
  const int launches = launches_per_graph(estimate_us_, options);
  if (allow_graph && launches > 1) try_graph(launches);
}

bool TimedWork::set_launches_per_sample(int launches) {
  graph_ = cuda::GraphExec();
  method_ = "events";
  launches_ = 1;
  if (launches > 1) try_graph(launches);
  return launches <= 1 || method_ == "graph";
}

void TimedWork::try_graph(int launches) {
  try {
    graph_ = cuda::capture_graph(stream_, launch_, launches);
    graph_.launch(stream_);  // the graph's own first run: not a trial
    KT_CU(cuStreamSynchronize, stream_);
    method_ = "graph";
    launches_ = launches;
  } catch (const std::exception& e) {  // CudaError, or a library's own (cuBLAS) error
    const auto* cuda_error = dynamic_cast<const cuda::CudaError*>(&e);
    if (cuda_error != nullptr && cuda::is_context_lost(cuda_error->code())) throw;
    graph_ = cuda::GraphExec();
    KT_CU(cuStreamSynchronize, stream_);  // a library error may hide a lost context: ask
    spdlog::warn(
        "timing: a {:.2f} us launch could not be captured into a graph ({}); timing "
        "single launches with events",
        estimate_us_, e.what());
  }
}

double TimedWork::time_enqueued(const std::function<void()>& enqueue, bool flush_l2) {
  if (flush_l2 && flusher_ != nullptr) flusher_->flush(stream_);
  start_.record(stream_);
  enqueue();
  stop_.record(stream_);
  stop_.synchronize();
  return static_cast<double>(cuda::elapsed_ms(start_, stop_)) * 1000.0;
}

double TimedWork::sample(bool flush_l2) {
  if (!graph_) return time_enqueued([&] { launch_(stream_); }, flush_l2);
  return time_enqueued([&] { graph_.launch(stream_); }, flush_l2) / launches_;
}

}  // namespace kt
