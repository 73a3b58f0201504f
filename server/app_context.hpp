// Everything a request handler may touch. Handlers only run short store queries and enqueue jobs
// on the scheduler, so an I/O thread never waits on compiling or measuring.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/access_control.hpp"
#include "server/answer_cache.hpp"
#include "server/http_metrics.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/paths.hpp"

namespace kt {

class EventStreamSlots;
class FamilyRegistrar;
class ShapePredictors;
class PredictedChecks;

#ifndef KT_VERSION
#define KT_VERSION "0.0.0"
#endif

inline constexpr std::size_t kDefaultMaxBodyBytes = 1 << 20;

struct AppContext {
  Store& store;
  const FamilyRegistry& families;
  JobScheduler& scheduler;
  std::vector<DeviceInfo> devices;  // GPUs this daemon tunes on (may be empty)
  std::string device_error;         // why there are none, from the probe
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  std::string version = KT_VERSION;
  AccessPolicy access{};  // open unless kerntuned was given --token-file
  std::filesystem::path web_dir = default_web_dir();  // the history page's static files
  // Answers of the remembered read routes, valid until the store's next write (shared: the
  // context stays copyable).
  std::shared_ptr<AnswerCache> answers = std::make_shared<AnswerCache>();
  // Families over the API (kerntuned --allow-user-families); null: POST /v1/families is refused.
  FamilyRegistrar* registrar = nullptr;
  // GET /v1/best?predict=1's answers for untuned shapes; null: predict=1 finds no model.
  const ShapePredictors* predictors = nullptr;
  // The compile check each predicted config gets; null: predicted answers say "not_checked".
  PredictedChecks* predicted_checks = nullptr;
  // Requests by route and status, their latency, the process (GET /metrics); shared like answers.
  std::shared_ptr<HttpMetrics> http_metrics = std::make_shared<HttpMetrics>();
  // The open event streams against their cap; set by HttpServer::start (null before).
  std::shared_ptr<EventStreamSlots> event_streams = nullptr;
};

}  // namespace kt
