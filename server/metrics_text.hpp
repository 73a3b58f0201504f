// GET /metrics: the engine's prometheus-cpp registry in the Prometheus text exposition format
// (version 0.0.4), written by prometheus-cpp's TextSerializer and served by our Beast server (not
// prometheus-cpp's own pull server). Reads in-memory metrics and /proc/self only (never the
// store), so it runs on the I/O thread.
#pragma once

#include <string>

#include "server/router.hpp"

namespace kt {

class EventStreamSlots;
class HttpMetrics;
class JobScheduler;

// streams: the open event streams, counted as kerntune_event_streams_open; http: the requests,
// the build (version) and the process (server/http_metrics.hpp). Null: left out.
std::string metrics_text(const JobScheduler& scheduler, const EventStreamSlots* streams = nullptr,
                         const HttpMetrics* http = nullptr, const std::string& version = "");

ApiResponse get_metrics(const ApiRequest& request, AppContext& context);

}  // namespace kt
