// When to time a kernel as a CUDA graph of several launches instead of one launch between two
// events, and how many launches per graph. A kernel of a few microseconds is dominated by the
// launch latency and the events' ~0.5 us resolution; a graph of N launches runs >= ~50 us and
// each sample is the graph's time / N. Pure, unit-tested.
#pragma once

#include "tuner/measure_protocol.hpp"

namespace kt {

// Most launches one graph may hold (a 0.05 us estimate must not build a graph of 1000s).
inline constexpr int kMaxLaunchesPerGraph = 1000;

// 1 (time single launches with events) unless 0 < estimate_us < options.graph_below_us; then
// ceil(options.graph_batch_us / estimate_us), at least 2 and at most kMaxLaunchesPerGraph.
int launches_per_graph(double estimate_us, const TimingOptions& options);

}  // namespace kt
