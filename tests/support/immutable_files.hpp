// Files made immutable for as long as the object lives, as `chattr +i` makes them: the way a test
// makes an SQLite file stop taking writes under a running daemon. Mode bits do not do it (root
// ignores them, and a descriptor opened before keeps its access); the immutable flag stops root
// too, and Linux refuses writes through descriptors opened before it was set (ext4, xfs, btrfs).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kt::test {

// Why files in `folder` cannot be made immutable here, or "" when they can: setting the flag
// needs CAP_LINUX_IMMUTABLE (root, usually) and a file system that has it, and a test needs the
// writes through an already open descriptor refused. Probes a scratch file in the folder.
std::string immutable_files_unsupported(const std::filesystem::path& folder);

class ImmutableFiles {
 public:
  // Sets the flag on each file; throws std::system_error naming the file when it cannot.
  explicit ImmutableFiles(std::vector<std::filesystem::path> files);
  ~ImmutableFiles();  // clears the flags again, so that the files can be written and removed
  ImmutableFiles(const ImmutableFiles&) = delete;
  ImmutableFiles& operator=(const ImmutableFiles&) = delete;

 private:
  std::vector<std::filesystem::path> files_;  // those whose flag this object set
};

}  // namespace kt::test
