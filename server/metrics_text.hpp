// GET /metrics: the engine's counters in the Prometheus text exposition format (version 0.0.4).
// Written here by hand, in one small file: prometheus-cpp is not packaged in Debian 12, and the
// format is a few lines of text per metric. Reads atomics only, so it runs on the I/O thread.
#pragma once

#include <string>

#include "server/router.hpp"

namespace kt {

class JobScheduler;

std::string metrics_text(const JobScheduler& scheduler);

ApiResponse get_metrics(const ApiRequest& request, AppContext& context);

}  // namespace kt
