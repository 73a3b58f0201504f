// Paths for tests, found from the test binary's location (build/bin) so a build folder copied to
// the GPU machine still finds the sources and the other binaries.
#pragma once

#include <filesystem>
#include <string>

namespace kt::test {

// The repository root (holds kernel_templates/).
std::filesystem::path source_dir();
// build/bin (holds kerntuned, kerntune, kerntune-worker).
std::filesystem::path binary_dir();
// A fresh, empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kt::test
