#include "server/metrics_text.hpp"

#include <prometheus/text_serializer.h>

#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"
#include "server/event_stream.hpp"

namespace kt {

std::string metrics_text(const JobScheduler& scheduler, const EventStreamSlots* streams,
                         const HttpMetrics* http, const std::string& version) {
  std::vector<prometheus::MetricFamily> families = scheduler.metric_families();
  if (http)
    for (prometheus::MetricFamily& family : http->collect(version))
      families.push_back(std::move(family));
  if (streams) {
    prometheus::MetricFamily family;
    family.name = "kerntune_event_streams_open";
    family.help = "live progress streams (GET /v1/jobs/{id}/events) open now";
    family.type = prometheus::MetricType::Gauge;
    prometheus::ClientMetric metric;
    metric.gauge.value = static_cast<double>(streams->open());
    family.metric.push_back(metric);
    families.push_back(std::move(family));
  }
  return prometheus::TextSerializer().Serialize(families);
}

ApiResponse get_metrics(const ApiRequest&, AppContext& context) {
  ApiResponse response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = metrics_text(context.scheduler, context.event_streams.get(),
                               context.http_metrics.get(), context.version);
  return response;
}

}  // namespace kt
