#include "support/store_probes.hpp"

#include <exception>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "client/client_error.hpp"
#include "client/http_transport.hpp"
#include "db/connection.hpp"

namespace kt::test {

JobSpec gemm_compile_job(std::int64_t budget) {
  JobSpec spec;
  spec.family = "gemm";
  spec.shape = {{"M", 256}, {"N", 256}, {"K", 256}};
  spec.dtype = "bf16";
  spec.mode = "compile";
  spec.arch = "sm_90a";
  spec.budget = budget;
  return spec;
}

nlohmann::json wait_for_job_end(const Client& client, std::int64_t job,
                                std::chrono::seconds limit) {
  nlohmann::json last;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      last = client.job(job);
      const std::string status = last.value("status", "");
      if (status != "queued" && status != "running") break;
    } catch (const ClientError&) {
      // not answered now (a 503 while the store is away): ask again
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return last;
}

std::int64_t query_int(const std::string& uri, const std::string& sql) {
  auto db = db::open_connection(uri, db::Access::read);
  db::Statement query(*db, sql);
  if (!query.step()) throw std::runtime_error("no row from: " + sql);
  return query.column(0).int64();
}

std::int64_t gated_variants(const Client& client, std::int64_t job) {
  try {
    const nlohmann::json by_status = client.job(job).at("progress").at("by_status");
    std::int64_t gated = 0;
    for (const char* done : {"compiled", "compile_error", "resource_exceeded"})
      gated += by_status.value(done, std::int64_t{0});
    return gated;
  } catch (const std::exception&) {
    return -1;
  }
}

std::string scrape_metrics(const std::string& url) {
  const HttpTransport transport(parse_server_url(url), std::chrono::seconds(30), "");
  const HttpReply reply = transport.send(boost::beast::http::verb::get, "/metrics");
  if (reply.status != 200)
    throw std::runtime_error("GET /metrics: " + std::to_string(reply.status) + " " + reply.body);
  return reply.body;
}

double metric_value(const std::string& exposition, const std::string& sample) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line))
    if (line.size() > sample.size() && line.compare(0, sample.size(), sample) == 0 &&
        line[sample.size()] == ' ')
      return std::stod(line.substr(sample.size() + 1));
  throw std::runtime_error("no sample " + sample + " in /metrics");
}

}  // namespace kt::test
