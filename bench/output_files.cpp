#include "bench/output_files.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kt::bench {

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path program_dir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path();
}

}  // namespace kt::bench
