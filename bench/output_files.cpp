#include "bench/output_files.hpp"

namespace kt::bench {

std::filesystem::path program_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

}  // namespace kt::bench
