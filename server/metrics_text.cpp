#include "server/metrics_text.hpp"

#include <prometheus/text_serializer.h>

#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"

namespace kt {

std::string metrics_text(const JobScheduler& scheduler) {
  return prometheus::TextSerializer().Serialize(scheduler.metric_families());
}

ApiResponse get_metrics(const ApiRequest&, AppContext& context) {
  ApiResponse response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = metrics_text(context.scheduler);
  return response;
}

}  // namespace kt
