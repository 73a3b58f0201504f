// The kerntune subcommands that only read or cancel: families, devices, best, pareto, history,
// show, cancel, kernel. Each prints text (or the server's JSON with --json) and returns the exit
// code; ClientError propagates to main, which prints it.
#pragma once

#include <cstdint>
#include <string>

#include "client/cli_context.hpp"

namespace kt {

struct TunedArgs {
  std::string family;
  std::string shape;  // "m=4096,n=4096,k=4096"
  std::string dtype;
  std::string device;
  // best only: --nearest, --tune-on-miss, --retune-stale (GET /v1/best's flags)
  bool nearest = false;
  bool tune_on_miss = false;
  bool predict = false;
  bool retune_stale = false;
};

struct HistoryArgs {
  std::string family;
  std::string status;
  int limit = 20;
};

int run_families(const CliContext& ctx);
int run_devices(const CliContext& ctx);
int run_best(const CliContext& ctx, const TunedArgs& args);
int run_pareto(const CliContext& ctx, const TunedArgs& args);
int run_history(const CliContext& ctx, const HistoryArgs& args);
// Lists the variants that reached the compiler; all = true lists pruned ones too.
int run_show(const CliContext& ctx, std::int64_t job_id, bool all = false);
int run_cancel(const CliContext& ctx, std::int64_t job_id);
int run_kernel(const CliContext& ctx, std::int64_t variant_id, const std::string& path);

}  // namespace kt
