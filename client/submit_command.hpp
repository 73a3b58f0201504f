// `kerntune submit`: sends a job and, with --wait, follows it with a progress bar until it ends
// (as `kerntune wait JOB_ID` follows one already submitted).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "client/cli_context.hpp"

namespace kt {

struct SubmitArgs {
  std::string family;
  std::string shape;  // "m=4096,n=4096,k=4096" or "4096x4096x4096"
  std::string dtype;
  std::string mode = "tune";
  std::string arch;
  std::string device;
  std::int64_t budget = 0;
  std::string search;
  double search_seconds = 0;
  int search_patience = 0;
  std::string pipeline;  // "" = the server's default
  std::string configs;   // JSON array, or @FILE holding one; "" = the whole space
  bool wait = false;
  bool plan = false;  // `kerntune plan`: ask what the job would be (dry_run=1), queue nothing
  std::chrono::milliseconds poll{1000};
};

int run_submit(const CliContext& ctx, const SubmitArgs& args);

// The GET /v1/families entry of a family, or null when the server does not know it.
nlohmann::json family_entry(const CliContext& ctx, const std::string& family);

// --configs: inline JSON, or @FILE; throws std::invalid_argument when it is not JSON.
nlohmann::json configs_arg(const std::string& text);

// From now on Ctrl-C says the job goes on in the daemon, and how to follow or stop it.
void notice_interrupt_of(std::int64_t job_id);

// Follows the job until it is done, failed or cancelled, with a progress display on ctx.err;
// returns its last state (GET /v1/jobs/{id}). The progress comes from the job's event stream
// (GET /v1/jobs/{id}/events); where that cannot be followed, from polling every `poll`.
nlohmann::json wait_for_job(const CliContext& ctx, std::int64_t job_id,
                            std::chrono::milliseconds poll);

// The summary of a finished job (or its JSON with --json); the exit code: kExitOk when the job
// is done, kExitJobFailed when it failed or was cancelled.
int report_finished_job(const CliContext& ctx, const nlohmann::json& job, double waited_s);

// `kerntune wait JOB_ID`: follows a job already submitted as submit --wait does.
int run_wait(const CliContext& ctx, std::int64_t job_id, std::chrono::milliseconds poll);

// "80 measured, 20 pruned, 3 compile_error" from a job's progress.by_status; gated_only leaves
// out the configs that never reached a gate (pruned, unsupported_arch).
std::string status_counts(const nlohmann::json& job, bool gated_only = false);

}  // namespace kt
