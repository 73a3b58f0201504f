#include "support/test_paths.hpp"

#include <random>
#include <stdexcept>

#include "tuner/paths.hpp"

namespace kt::test {

std::filesystem::path source_dir() {
  const auto from_exe = (kt::executable_dir() / ".." / "..").lexically_normal();
  if (std::filesystem::is_directory(from_exe / "kernel_templates")) return from_exe;
  return KT_TEST_SOURCE_DIR;
}

std::filesystem::path binary_dir() {
  return kt::executable_dir();
}

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = std::filesystem::temp_directory_path() /
                     ("kerntune-test-" + std::to_string(rd()) + std::to_string(attempt));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("could not create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace kt::test
