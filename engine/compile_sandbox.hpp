// How the daemon's compile processes run, decided once at start-up: confined by Landlock to
// reading the CUDA headers (tuner/compile/compile_confinement.hpp), and, for a daemon started as
// root, as an unprivileged account. Uploaded families are compiled there, so a daemon that takes
// uploads refuses to start when it cannot confine them, unless the operator says otherwise.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/child_process.hpp"

namespace kt {

struct CompileSandboxRequest {
  std::filesystem::path worker;      // kerntune-worker, which the account must be able to run
  bool allow_user_families = false;  // uploads are compiled: confinement is required
  bool unconfined = false;           // --unconfined-compiles: the operator's explicit choice
  std::string run_as = "nobody";  // account for compile processes and workers if the daemon is root
};

struct CompileSandbox {
  bool confined = false;
  std::optional<ProcessUser> user;  // none: compile processes and workers run as the daemon does
  std::vector<std::string> notes;   // what was decided and why, for the log
  std::vector<std::string> warnings;
};

// Thrown when the daemon must not start; the message says what to change.
class CompileSandboxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The account "root" (or uid 0) keeps compiles as root; when this process is not root, run_as is
// ignored (it cannot switch accounts) and a note says so.
CompileSandbox choose_compile_sandbox(const CompileSandboxRequest& request);

}  // namespace kt
