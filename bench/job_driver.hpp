// Tuning jobs through the real daemon, as the benchmark programs run them: the POST /v1/jobs body
// (with the fields "pipeline" and "configs"), polling until the job ends with one
// progress line per change on stderr, cancelling a job that runs past its time, and reading back
// a job's variants. The body and progress text are pure functions (unit-tested).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result_names.hpp"
#include "client/kerntune_client.hpp"

namespace kt::bench {

struct JobRequest {
  std::string family = "gemm";
  GemmShape shape;
  // Another family's shape, dim -> extent ({"B":4,"H":16,...}); when set it is sent instead of
  // shape's M, N, K.
  std::map<std::string, std::int64_t> dims;
  std::string dtype = "bf16";
  std::int64_t budget = 0;  // 0 = every variant that survives the constraints
  std::string device;       // "" = the daemon's first GPU
  std::string pipeline;     // "" = the daemon's default; "serial" | "pipelined"
  std::vector<nlohmann::json>
      configs;       // pinned configs ({"template":..., axis: value}); empty = all
  std::string arch;  // "" = tune on the GPU; else a compile-only job for this arch (no GPU needed)
};

// {"family","shape":{"M","N","K"} (or dims),"dtype","mode":"tune","budget"[,"device"][,"pipeline"]
// [,"configs"]}; with arch: "mode":"compile","arch":arch.
nlohmann::json job_request_body(const JobRequest& request);

// Counts of a GET /v1/jobs/{id} answer, leaving out the variants the constraints pruned (which
// never reach the compiler).
struct JobCounts {
  std::int64_t to_run = 0;    // variants that go through the gates
  std::int64_t finished = 0;  // of those, ended in any state
  std::int64_t measured = 0;
  std::optional<double> best_us;  // fastest measured so far
};
JobCounts job_counts(const nlohmann::json& job);

// "[gemm 4096x4096x4096] job 3 running 12/24 variants, 10 measured, best 180.2 us, 14 s"
std::string progress_line(const std::string& label, const nlohmann::json& job, double seconds);

// The config a variant JSON names, pinnable in "configs": {"template": name, axis: value, ...}.
nlohmann::json pinned_config(const nlohmann::json& variant);
// A text that names a variant's template and config, equal for equal configs of any job:
// "template|BK=64,BM=128,...".
std::string variant_key(const nlohmann::json& variant);

bool is_terminal_status(const std::string& status);

struct WaitOptions {
  std::chrono::milliseconds poll = std::chrono::milliseconds(1000);
  double timeout_seconds = 0;  // 0 = wait for ever; else cancel the job after this long
  std::ostream* progress = nullptr;
};

struct JobRun {
  nlohmann::json job;      // the last GET /v1/jobs/{id} answer
  double seconds = 0;      // from POST to the job's end, as this program saw it
  bool cut_short = false;  // cancelled by us after timeout_seconds
};

// Submits the job and waits for it to end (done, failed or cancelled). Throws kt::ClientError
// when the daemon refuses the job or cannot be reached.
JobRun run_job(const kt::Client& client, const JobRequest& request, const std::string& label,
               const WaitOptions& options);

// The job's variants that reached the compiler (GET /v1/jobs/{id}/variants?exclude_pruned=1),
// every page of them in id order.
std::vector<nlohmann::json> job_variants(const kt::Client& client, std::int64_t job_id);

}  // namespace kt::bench
