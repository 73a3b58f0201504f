#include "tuner/paths.hpp"

#include <system_error>

namespace kt {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::filesystem::current_path();
  return exe.parent_path();
}

std::filesystem::path default_families_dir() {
  const auto dir = executable_dir();
  const auto installed = dir / ".." / "share" / "kerntune" / "kernel_templates";
  if (std::filesystem::is_directory(installed)) return installed.lexically_normal();
  return (dir / ".." / ".." / "kernel_templates").lexically_normal();
}

std::filesystem::path default_web_dir() {
  const auto dir = executable_dir();
  const auto installed = dir / ".." / "share" / "kerntune" / "web";
  if (std::filesystem::is_directory(installed)) return installed.lexically_normal();
  return (dir / ".." / ".." / "web").lexically_normal();
}

std::filesystem::path default_worker_path() {
  return executable_dir() / "kerntune-worker";
}

}  // namespace kt
