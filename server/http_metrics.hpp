// What GET /metrics says about the HTTP face and the process: requests counted by route pattern
// (not the raw path: the labels stay few), method and status, their latency as a histogram, the
// build, and the process's CPU time, memory and open files (Prometheus's process_* names, read
// from /proc at each scrape). Thread-safe: every I/O thread records into it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace prometheus {
class Counter;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace kt {

class HttpMetrics {
 public:
  HttpMetrics();
  ~HttpMetrics();
  HttpMetrics(const HttpMetrics&) = delete;
  HttpMetrics& operator=(const HttpMetrics&) = delete;

  // route: the pattern the request matched ("/v1/jobs/{id}"), or "" for none (a 404, a bad
  // target, a refusal before routing), counted as "unmatched".
  void observe(const std::string& route, const std::string& method, unsigned status,
               double seconds);
  // The HTTP families, kerntune_build_info{version} and the process_* gauges, as of now.
  std::vector<prometheus::MetricFamily> collect(const std::string& version) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* latency_ = nullptr;
};

}  // namespace kt
