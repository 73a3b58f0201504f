#include "engine/compile_sandbox.hpp"

#include <unistd.h>

#include "tuner/compile/compile_confinement.hpp"

namespace kt {

CompileSandbox choose_compile_sandbox(const CompileSandboxRequest& request) {
  CompileSandbox sandbox;
  const ConfinementSupport support = landlock_support();
  if (request.unconfined) {
    sandbox.warnings.push_back(
        "compiles are not confined (--unconfined-compiles): an uploaded family's #include can "
        "read any file this daemon's compile processes can");
  } else if (support.available()) {
    sandbox.confined = true;
    sandbox.notes.push_back("compiles confined with Landlock (ABI " + std::to_string(support.abi) +
                            "): compile processes read only the CUDA headers");
  } else if (request.allow_user_families) {
    throw CompileSandboxError(
        "family uploads (--allow-user-families) are compiled in confined processes, and this "
        "machine cannot confine them: " +
        support.why_not +
        ". Run on a kernel with Landlock, or pass --unconfined-compiles to accept uploads "
        "compiled without confinement");
  } else {
    sandbox.warnings.push_back("compiles are not confined (" + support.why_not +
                               "); uploads are off, so only this daemon's own families compile");
  }

  if (geteuid() != 0) {
    sandbox.notes.push_back(
        "compile processes and workers run as this daemon's user (it is not root)");
    return sandbox;
  }
  ProcessUser user;
  try {
    user = lookup_process_user(request.run_as);
  } catch (const std::exception& error) {
    throw CompileSandboxError("--run-as " + request.run_as.substr(0, 64) + ": " + error.what() +
                              "; name an existing unprivileged account, or root to keep "
                              "compiles running as root");
  }
  if (user.uid == 0) {
    if (request.allow_user_families)
      sandbox.warnings.push_back("compile processes and workers run as root (--run-as " +
                                 user.name + "), uploads included");
    return sandbox;
  }
  if (const std::string why_not = why_user_cannot_access(user, request.worker, X_OK);
      !why_not.empty())
    throw CompileSandboxError(
        "compile processes and workers run as " + user.name +
        " (--run-as) when the daemon is root, and " + why_not +
        ". Install kerntune where that account can read it (cmake --install), pass --run-as "
        "with an account that can run it, or --run-as root");
  sandbox.notes.push_back("compile processes and workers run as " + user.name + " (uid " +
                          std::to_string(user.uid) + ")");
  sandbox.user = user;
  return sandbox;
}

}  // namespace kt
