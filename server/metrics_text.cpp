#include "server/metrics_text.hpp"

#include <charconv>
#include <cmath>

#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"

namespace kt {
namespace {

// Prometheus' float format: shortest round-trip text, +Inf for infinity.
std::string number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

void header(std::string& out, const std::string& name, const std::string& type,
            const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void histogram(std::string& out, const std::string& name, const std::string& help,
               const LatencyHistogram::Snapshot& snap) {
  header(out, name, "histogram", help);
  for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
    const double bound = i < snap.bounds.size() ? snap.bounds[i] : INFINITY;
    out +=
        name + "_bucket{le=\"" + number(bound) + "\"} " + std::to_string(snap.cumulative[i]) + "\n";
  }
  out += name + "_sum " + number(snap.sum) + "\n";
  out += name + "_count " + std::to_string(snap.count) + "\n";
}

}  // namespace

std::string metrics_text(const JobScheduler& scheduler) {
  const EngineMetrics& m = scheduler.metrics();
  std::string out;
  header(out, "kerntune_jobs_queued", "gauge", "Jobs waiting for a runner (the queue depth).");
  out += "kerntune_jobs_queued " + std::to_string(m.queued()) + "\n";
  header(out, "kerntune_jobs_running", "gauge", "Jobs a runner is working on.");
  out += "kerntune_jobs_running " + std::to_string(m.running()) + "\n";
  header(out, "kerntune_jobs_ended_total", "counter",
         "Jobs that ended since the daemon started, by final status.");
  for (const JobStatus status : {JobStatus::done, JobStatus::failed, JobStatus::cancelled})
    out += "kerntune_jobs_ended_total{status=\"" + std::string(to_string(status)) + "\"} " +
           std::to_string(m.jobs_ended(status)) + "\n";
  header(out, "kerntune_variants_total", "counter",
         "Variants that went through the gates since the daemon started, by outcome.");
  for (std::size_t i = 0; i < kVariantStatusCount; ++i) {
    const auto status = static_cast<VariantStatus>(i);
    if (status == VariantStatus::pending || status == VariantStatus::pruned ||
        status == VariantStatus::unsupported_arch)
      continue;  // planned, never through a gate: counted per job in the store
    out += "kerntune_variants_total{outcome=\"" + std::string(to_string(status)) + "\"} " +
           std::to_string(m.variants_ended(status)) + "\n";
  }
  histogram(out, "kerntune_compile_seconds", "NVRTC compile time per variant (cache misses).",
            m.compile_seconds());
  histogram(out, "kerntune_measure_seconds",
            "Worker time per measured variant (load, checks, timing).", m.measure_seconds());
  header(out, "kerntune_worker_restarts_total", "counter",
         "Measurement workers started again after a crash, hang or illegal access.");
  out += "kerntune_worker_restarts_total " + std::to_string(scheduler.worker_restarts()) + "\n";
  header(out, "kerntune_gpu_busy_seconds_total", "counter",
         "Seconds each GPU's worker spent measuring variants.");
  const auto busy = m.gpu_busy_seconds();
  for (const DeviceInfo& device : scheduler.devices()) {
    const auto it = busy.find(device.ordinal);
    out += "kerntune_gpu_busy_seconds_total{gpu=\"" + std::to_string(device.ordinal) +
           "\",uuid=\"" + device.uuid + "\"} " + number(it == busy.end() ? 0.0 : it->second) + "\n";
  }
  return out;
}

ApiResponse get_metrics(const ApiRequest&, AppContext& context) {
  ApiResponse response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = metrics_text(context.scheduler);
  return response;
}

}  // namespace kt
