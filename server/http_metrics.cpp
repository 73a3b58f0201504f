#include "server/http_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace kt {
namespace {

prometheus::MetricFamily gauge(const std::string& name, const std::string& help, double value,
                               prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter)
    metric.counter.value = value;
  else
    metric.gauge.value = value;
  family.metric.push_back(metric);
  return family;
}

// /proc/self/stat's fields after the command name (which may hold spaces): utime is field 14,
// stime 15, starttime 22 (in clock ticks).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 2));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;  // fields[0] is field 3 (state)
}

double boot_time_seconds() {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  return 0;
}

}  // namespace

HttpMetrics::HttpMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("kerntune_http_requests_total")
                   .Help("HTTP requests answered, by route pattern, method and status")
                   .Register(*registry_);
  latency_ = &prometheus::BuildHistogram()
                  .Name("kerntune_http_request_duration_seconds")
                  .Help(
                      "from the request read to its answer handed to the socket, by route "
                      "pattern and method (an event stream: until its first bytes)")
                  .Register(*registry_);
}

HttpMetrics::~HttpMetrics() = default;

void HttpMetrics::observe(const std::string& route, const std::string& method, unsigned status,
                          double seconds) {
  const std::string pattern = route.empty() ? "unmatched" : route;
  requests_->Add({{"route", pattern}, {"method", method}, {"status", std::to_string(status)}})
      .Increment();
  latency_
      ->Add({{"route", pattern}, {"method", method}},
            prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                    0.1, 0.25, 0.5, 1, 2.5, 5})
      .Observe(seconds);
}

std::vector<prometheus::MetricFamily> HttpMetrics::collect(const std::string& version) const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  prometheus::MetricFamily build = gauge("kerntune_build_info", "the daemon's version", 1);
  build.metric.front().label.push_back({"version", version});
  families.push_back(std::move(build));

  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const std::vector<std::string> stat = stat_fields();
  if (stat.size() > 19 && ticks > 0) {
    const double cpu = (std::stod(stat[11]) + std::stod(stat[12])) / ticks;  // utime + stime
    families.push_back(gauge("process_cpu_seconds_total", "user and system CPU time spent", cpu,
                             prometheus::MetricType::Counter));
    families.push_back(gauge("process_start_time_seconds",
                             "start time of the process since the Unix epoch",
                             boot_time_seconds() + std::stod(stat[19]) / ticks));
  }
  std::ifstream statm("/proc/self/statm");
  double pages_total = 0, pages_resident = 0;
  if (statm >> pages_total >> pages_resident) {
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    families.push_back(
        gauge("process_virtual_memory_bytes", "virtual memory size", pages_total * page));
    families.push_back(
        gauge("process_resident_memory_bytes", "resident memory size", pages_resident * page));
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++fds;
  if (!ec) families.push_back(gauge("process_open_fds", "open file descriptors", fds));
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    families.push_back(gauge("process_max_fds", "the limit of open file descriptors",
                             static_cast<double>(limit.rlim_cur)));
  return families;
}

}  // namespace kt
