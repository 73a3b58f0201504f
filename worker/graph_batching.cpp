#include "worker/graph_batching.hpp"

#include <algorithm>
#include <cmath>

namespace kt {

int launches_per_graph(double estimate_us, const TimingOptions& options) {
  if (!(options.graph_below_us > 0) || !std::isfinite(estimate_us) || estimate_us < 0 ||
      estimate_us >= options.graph_below_us)
    return 1;
  // An estimate of 0 (below the events' resolution) counts as the smallest measurable time.
  const double per_launch_us = std::max(estimate_us, 0.5);
  const double wanted = std::ceil(std::max(options.graph_batch_us, 0.0) / per_launch_us);
  return static_cast<int>(std::clamp(wanted, 2.0, static_cast<double>(kMaxLaunchesPerGraph)));
}

}  // namespace kt
