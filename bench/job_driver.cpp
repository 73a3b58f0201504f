#include "bench/job_driver.hpp"

#include <ostream>
#include <thread>

#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t count_of(const nlohmann::json& by_status, const char* status) {
  if (!by_status.is_object() || !by_status.contains(status) || !by_status.at(status).is_number())
    return 0;
  return by_status.at(status).get<std::int64_t>();
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

nlohmann::json job_request_body(const JobRequest& request) {
  nlohmann::json body = {{"family", request.family},
                         {"shape", request.dims.empty() ? nlohmann::json{{"M", request.shape.m},
                                                                         {"N", request.shape.n},
                                                                         {"K", request.shape.k}}
                                                        : nlohmann::json(request.dims)},
                         {"dtype", request.dtype},
                         {"mode", request.arch.empty() ? "tune" : "compile"},
                         {"budget", request.budget}};
  if (!request.arch.empty()) body["arch"] = request.arch;
  if (!request.device.empty()) body["device"] = request.device;
  if (!request.pipeline.empty()) body["pipeline"] = request.pipeline;
  if (!request.configs.empty()) body["configs"] = request.configs;
  return body;
}

JobCounts job_counts(const nlohmann::json& job) {
  JobCounts counts;
  const nlohmann::json progress = job.value("progress", nlohmann::json::object());
  const nlohmann::json by_status = progress.value("by_status", nlohmann::json::object());
  const std::int64_t never_run =
      count_of(by_status, "pruned") + count_of(by_status, "unsupported_arch");
  counts.to_run = progress.value("total", std::int64_t{0}) - never_run;
  counts.finished = progress.value("finished", std::int64_t{0}) - never_run;
  counts.measured = count_of(by_status, "measured");
  const nlohmann::json best = job.value("best", nlohmann::json());
  if (best.is_object() && best.contains("median_us") && best.at("median_us").is_number())
    counts.best_us = best.at("median_us").get<double>();
  return counts;
}

std::string progress_line(const std::string& label, const nlohmann::json& job, double seconds) {
  const JobCounts counts = job_counts(job);
  std::string line = "[" + label + "] job " + std::to_string(job.value("id", std::int64_t{0})) +
                     " " + job.value("status", std::string("?"));
  if (counts.to_run > 0)
    line += " " + std::to_string(counts.finished) + "/" + std::to_string(counts.to_run) +
            " variants, " + std::to_string(counts.measured) + " measured";
  else
    line += ", planning";
  if (counts.best_us) line += ", best " + format_fixed(*counts.best_us, 1) + " us";
  return line + ", " + format_fixed(seconds, 0) + " s";
}

nlohmann::json pinned_config(const nlohmann::json& variant) {
  nlohmann::json config = variant.value("config", nlohmann::json::object());
  config["template"] = variant.value("template", std::string());
  return config;
}

std::string variant_key(const nlohmann::json& variant) {
  std::string key = variant.value("template", std::string()) + "|";
  bool first = true;
  const nlohmann::json config = variant.value("config", nlohmann::json::object());
  for (const auto& [axis, value] : config.items()) {
    key += (first ? "" : ",") + axis + "=" + value.dump();
    first = false;
  }
  return key;
}

bool is_terminal_status(const std::string& status) {
  return status == "done" || status == "failed" || status == "cancelled";
}

JobRun run_job(const kt::Client& client, const JobRequest& request, const std::string& label,
               const WaitOptions& options) {
  const auto start = Clock::now();
  JobRun run;
  run.job =
      client.call(boost::beast::http::verb::post, "/v1/jobs", job_request_body(request).dump());
  const std::int64_t id = run.job.at("id").get<std::int64_t>();
  std::string last_line;  // the last printed line without its time
  bool cancel_sent = false;
  while (!is_terminal_status(run.job.value("status", std::string()))) {
    std::this_thread::sleep_for(options.poll);
    run.job = client.job(id);
    if (options.progress) {
      const std::string line = progress_line(label, run.job, seconds_since(start));
      // Only changes are printed; the time alone does not count as a change.
      const std::string without_time = line.substr(0, line.rfind(", "));
      if (without_time != last_line) *options.progress << line << std::endl;
      last_line = without_time;
    }
    if (!cancel_sent && options.timeout_seconds > 0 &&
        seconds_since(start) > options.timeout_seconds &&
        !is_terminal_status(run.job.value("status", std::string()))) {
      if (options.progress)
        *options.progress << "[" << label << "] job " << id << " past its "
                          << format_fixed(options.timeout_seconds, 0) << " s: cancelling"
                          << std::endl;
      cancel_sent = true;
      try {
        client.cancel(id);
        run.cut_short = true;
      } catch (const ClientError& error) {
        if (error.status() != 409) throw;  // 409: it ended in the meantime
      }
    }
  }
  run.seconds = seconds_since(start);
  if (options.progress && last_line.empty())  // ended before the first poll
    *options.progress << progress_line(label, run.job, run.seconds) << std::endl;
  return run;
}

std::vector<nlohmann::json> job_variants(const kt::Client& client, std::int64_t job_id) {
  // Client::variants follows the server's pages to the end.
  const nlohmann::json answer =
      client.variants(job_id, /*with_log=*/false, /*exclude_pruned=*/true);
  std::vector<nlohmann::json> variants;
  for (const nlohmann::json& v : answer.value("variants", nlohmann::json::array()))
    variants.push_back(v);
  return variants;
}

}  // namespace kt::bench
