// What every kerntune subcommand gets: the client, where to write, and --json. Commands return
// the process exit code (see kExit*).
#pragma once

#include <ostream>

#include "client/kerntune_client.hpp"

namespace kt {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // the server refused, or bad arguments
inline constexpr int kExitJobFailed = 2;    // submit --wait: the job failed or was cancelled
inline constexpr int kExitUnreachable = 3;  // no kerntuned at --server

struct CliContext {
  const Client& client;
  std::ostream& out;
  std::ostream& err;
  bool json = false;         // print the server's JSON instead of text
  bool interactive = false;  // stderr is a terminal: redraw the progress bar in place
};

}  // namespace kt
