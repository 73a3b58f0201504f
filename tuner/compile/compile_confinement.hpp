// Confinement of a compile process (kerntune-worker --compile) with Landlock: once confined, the
// process can read files only under the folders it was given (the CUDA toolkit's headers), and can
// write, create, execute or connect nothing. An uploaded family's sources reach NVRTC in memory, so
// an #include that names a host file ("/etc/passwd", "../../etc/shadow", "/proc/self/environ", a
// file in the daemon's working directory) fails to open instead of landing in the compile log.
//
// Landlock needs Linux 5.13 or later with the LSM enabled (Debian's kernels have it). The rules
// hold for the process and whatever it starts, and cannot be lifted.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kt {

class ConfinementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ConfinementSupport {
  int abi = 0;          // Landlock ABI version; 0: none
  std::string why_not;  // why there is none ("the kernel has no Landlock (ENOSYS)")
  bool available() const { return abi > 0; }
};

// Asks the running kernel; no process state changes.
ConfinementSupport landlock_support();

// Confines the calling process (every thread it starts later too; call it while it has one) to
// reading under `readable`. Throws ConfinementError when Landlock is missing or a folder cannot be
// opened; the process is then unchanged.
void confine_to_reading(const std::vector<std::filesystem::path>& readable);

}  // namespace kt
