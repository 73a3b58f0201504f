// GET /metrics: the engine's prometheus-cpp registry in the Prometheus text exposition format
// (version 0.0.4), written by prometheus-cpp's TextSerializer and served by our Beast server (not
// prometheus-cpp's own pull server). Reads in-memory metrics only, so it runs on the I/O thread.
#pragma once

#include <string>

#include "server/router.hpp"

namespace kt {

class EventStreamSlots;
class JobScheduler;

// streams: the open event streams, counted as kerntune_event_streams_open (null: left out).
std::string metrics_text(const JobScheduler& scheduler, const EventStreamSlots* streams = nullptr);

ApiResponse get_metrics(const ApiRequest& request, AppContext& context);

}  // namespace kt
