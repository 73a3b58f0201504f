// The measured work as trials see it: either one launch between two CUDA events ("events"), or,
// for a kernel so short that launch latency and the events' ~0.5 us resolution would dominate, a
// CUDA graph of N back-to-back launches whose time is divided by N ("graph"). Which one is
// decided once, from a short estimate after warm-up (graph_batching.hpp has the rule).
#pragma once

#include <cuda.h>

#include <functional>
#include <string>

#include "tuner/measure_protocol.hpp"
#include "worker/cuda_event.hpp"
#include "worker/cuda_graph.hpp"
#include "worker/l2_flusher.hpp"

namespace kt {

// Enqueues one run of the measured work on the stream. Throws CudaError if it cannot.
using LaunchFn = std::function<void(CUstream)>;

class TimedWork {
 public:
  // Warms up (options.warmup_runs launches, then a synchronize, so a fault surfaces here),
  // estimates one launch from a few cold trials and, when allow_graph and the estimate is short
  // enough, captures the graph. A graph that cannot be captured (e.g. a library that allocates
  // inside the launch) falls back to events with a warning; a sticky fault is thrown.
  // flusher may be null: trials are then warm. launch must outlive this object.
  TimedWork(LaunchFn launch, const TimingOptions& options, CUstream stream,
            cuda::L2Flusher* flusher, bool allow_graph = true);

  // One trial in microseconds per launch: the L2 flush (when asked and a flusher exists), then
  // the events around the launch or the graph. With a graph the flush comes once per graph: its
  // first launch starts cold and the other N-1 find what their predecessor left in L2, as
  // back-to-back calls of a short kernel do in a real model.
  double sample(bool flush_l2);

  // Times `launches` back-to-back launches per sample as a CUDA graph (launches > 1) or single
  // launches with events (launches <= 1), overriding the choice made at construction: an
  // interleaved comparison gives every side the same method. False if the graph could not be
  // captured (the work then stays on events).
  bool set_launches_per_sample(int launches);

  const std::string& method() const { return method_; }
  int launches_per_sample() const { return launches_; }
  double estimate_us() const { return estimate_us_; }

 private:
  double time_enqueued(const std::function<void()>& enqueue, bool flush_l2);
  void try_graph(int launches);

  LaunchFn launch_;
  CUstream stream_;
  cuda::L2Flusher* flusher_;
  cuda::Event start_;
  cuda::Event stop_;
  cuda::GraphExec graph_;
  std::string method_ = "events";
  int launches_ = 1;
  double estimate_us_ = 0;
};

}  // namespace kt
