// A small synchronous client for the kerntuned HTTP API (docs/api.md): the library the kerntune
// CLI is built on, and the one a program links to ask for its best config. Every call opens its
// own connection, so one Client may be shared by threads. Failures throw kt::ClientError.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/client_error.hpp"
#include "client/http_transport.hpp"

namespace kt {

// POST /v1/jobs
struct JobSpec {
  std::string family;
  std::map<std::string, std::int64_t> shape;  // dim -> extent (names case-insensitive)
  std::string dtype;
  std::string mode = "tune";  // "tune" | "compile"
  std::string arch;           // compile mode: "sm_90a", "sm_100a", ...
  std::string device;         // tune mode: ordinal, UUID or name; "" = first GPU
  std::int64_t budget = 0;    // max variants through the gates; 0 = all
  std::string search;         // "" = the server's default
  double search_seconds = 0;  // 0 = no time limit
  int search_patience = 0;    // batches without improvement; 0 = none
  std::string pipeline;       // "pipelined" | "serial"; "" = the server's default (pipelined)
  nlohmann::json configs;     // null = the whole space; else an array of configs to measure
};

// GET /v1/best and /v1/pareto
struct TunedQuery {
  std::string family;
  std::map<std::string, std::int64_t> shape;
  std::string dtype;
  std::string device;  // device model (or selector); "" = any
  // GET /v1/best only (docs/api.md): on a miss answer with the nearest tuned shape, on a miss
  // start a job, on a stale answer start a job re-tuning it.
  bool nearest = false;
  bool tune_on_miss = false;
  bool predict = false;  // a miss: the shape predictor's config, flagged "predicted"
  bool retune_stale = false;
};

// GET /v1/history
struct HistoryQuery {
  std::string family;  // "" = any
  std::string status;  // "" = any
  int limit = 50;      // jobs wanted in all; history() asks for as many pages as that takes
  int offset = 0;      // deprecated by the server's cursors; sent on the first page only
};

// The server's largest page (docs/api.md): clients that read everything ask for full pages.
inline constexpr int kMaxServerPage = 1000;

// The answer of GET /v1/best, typed; raw keeps every field.
// GET /v1/best. With baseline_wins the answer is the family's baseline (the library call:
// template_name is its kind, config its numeric choices, variant_id 0) and our best variant is
// raw["best_own"] (null when none was measured).
struct BestConfig {
  std::string family, dtype, device, arch, template_name;
  std::map<std::string, std::int64_t> shape, config;
  double median_us = 0, tflops = 0, gbps = 0;
  std::optional<double> speedup_vs_reference, reference_us;
  std::int64_t job_id = 0, variant_id = 0;
  bool baseline_wins = false;
  nlohmann::json raw;
};

BestConfig best_config_from_json(const nlohmann::json& j);

// $KERNTUNE_SERVER if set, else http://127.0.0.1:8080.
std::string default_server_url();

class Client {
 public:
  explicit Client(const std::string& server_url = default_server_url(),
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

  const std::string& url() const { return transport_.address().url; }

  nlohmann::json health() const;
  nlohmann::json families() const;
  nlohmann::json devices() const;
  // POST /v1/families with {"manifest", "sources"}: the registration (202 compiling, or 200 when
  // this version is already registered). family_upload_from_dir builds the body from a folder.
  // Ordered: the manifest's key order is the order of its dims and axes (a sorted copy would
  // turn M, N, K into K, M, N).
  nlohmann::json register_family(const nlohmann::ordered_json& upload) const;
  nlohmann::json family_registration(const std::string& id) const;

  // dry_run: POST /v1/jobs?dry_run=1, the job's preview (nothing queued).
  nlohmann::json submit_job(const JobSpec& spec, bool dry_run = false) const;
  nlohmann::json job(std::int64_t id) const;
  // Every variant of the job: follows the server's pages ("next") to the end and answers as one
  // page would, {"job_id", "status", "count", "total", "skipped", "next": null, "variants"}.
  // with_log: include each variant's compile log; exclude_pruned: leave out variants that never
  // reached the compiler (pruned, unsupported_arch), usually most of the space.
  nlohmann::json variants(std::int64_t job_id, bool with_log = false,
                          bool exclude_pruned = false) const;
  // One page as the server sends it; cursor "" = the first page, limit 0 = the server's default.
  nlohmann::json variants_page(std::int64_t job_id, bool with_log, bool exclude_pruned,
                               const std::string& cursor, int limit = 0) const;
  nlohmann::json cancel(std::int64_t job_id) const;
  // Follows GET /v1/jobs/{id}/events: on_event(name, data) for each event ("status",
  // "progress", "best", "end") until the server closes the stream after "end", or on_event
  // returns false. idle_timeout: the longest silence taken for a live stream (the server sends a
  // heartbeat every 15 s). Returns 200 once read; throws ClientError with the API's code for an
  // error answer (404 unknown_job, 503 too_many_event_streams), status 0 when the stream breaks.
  void follow_job(std::int64_t job_id,
                  const std::function<bool(const std::string&, const nlohmann::json&)>& on_event,
                  std::chrono::milliseconds idle_timeout = std::chrono::seconds(60)) const;

  BestConfig best(const TunedQuery& query) const;
  // GET /v1/best as the server answers it: the answer (200), or with tune_on_miss/retune_stale
  // {"job", "link", "new_job", "answer"} (202).
  nlohmann::json best_answer(const TunedQuery& query) const;
  // nullopt when nothing is tuned for the query (404 not_tuned); other errors still throw.
  std::optional<BestConfig> find_best(const TunedQuery& query) const;
  nlohmann::json pareto(const TunedQuery& query) const;
  // Up to query.limit jobs, newest first, over as many pages as needed: {"limit", "offset",
  // "count", "next" (the cursor after the last job returned, null at the end), "jobs"}.
  nlohmann::json history(const HistoryQuery& query) const;

  // The compiled cubin of a variant.
  std::vector<char> fetch_kernel(std::int64_t variant_id) const;

  // Any endpoint: the JSON body of a 2xx reply; ClientError with the API's code otherwise.
  nlohmann::json call(boost::beast::http::verb method, const std::string& target,
                      const std::string& body = "") const;

 private:
  HttpReply checked(boost::beast::http::verb method, const std::string& target,
                    const std::string& body) const;

  HttpTransport transport_;
};

}  // namespace kt
