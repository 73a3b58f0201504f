// `kerntune tune-all SHAPES.jsonl`: tunes every problem a recorded program ran (the shapes file
// kerntune.torch.record writes), the ones that took most of its time first, skipping those
// already tuned and current on the target GPU model; one progress line for the whole batch,
// then a table of what each problem's answer is.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "client/cli_context.hpp"

namespace kt {

struct TuneAllArgs {
  std::string shapes_path;
  std::int64_t budget_per_shape = 64;  // variants measured per problem; 0 = the whole space
  double minutes = 0;                  // cancel what is left after this long; 0 = no limit
  std::string device;                  // GPU ordinal, UUID or name; "" = the daemon's first GPU
  std::string search;                  // "" = the server's default
  bool retune = false;                 // tune problems already tuned and current, too
  bool dry_run = false;                // say what would be tuned, submit nothing
  std::chrono::milliseconds poll{1000};
};

int run_tune_all(const CliContext& ctx, const TuneAllArgs& args);

}  // namespace kt
