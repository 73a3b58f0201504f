// `kerntune submit`: sends a job and, with --wait, follows it with a progress bar until it ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "client/cli_context.hpp"

namespace kt {

struct SubmitArgs {
  std::string family;
  std::string shape;  // "m=4096,n=4096,k=4096"
  std::string dtype;
  std::string mode = "tune";
  std::string arch;
  std::string device;
  std::int64_t budget = 0;
  std::string search;
  double search_seconds = 0;
  int search_patience = 0;
  bool wait = false;
  std::chrono::milliseconds poll{1000};
};

int run_submit(const CliContext& ctx, const SubmitArgs& args);

// Polls GET /v1/jobs/{id} until the job is done, failed or cancelled; returns its last state.
nlohmann::json wait_for_job(const CliContext& ctx, std::int64_t job_id,
                            std::chrono::milliseconds poll);

// "80 measured, 20 pruned, 3 compile_error" from a job's progress.by_status.
std::string status_counts(const nlohmann::json& job);

}  // namespace kt
