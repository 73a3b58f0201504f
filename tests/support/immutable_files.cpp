#include "support/immutable_files.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace kt::test {
namespace {

// Sets or clears FS_IMMUTABLE_FL (what chattr does, without needing e2fsprogs); errno on failure.
int set_immutable(const std::filesystem::path& file, bool on) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno;
  int flags = 0;  // the kernel reads and writes an int, whatever the ioctl's declared type
  int error = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
    error = errno;
  } else {
    flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
    if (::ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) error = errno;
  }
  ::close(fd);
  return error;
}

}  // namespace

std::string immutable_files_unsupported(const std::filesystem::path& folder) {
  const std::filesystem::path probe = folder / "immutable-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + probe.string() + ": " + std::strerror(errno);
  std::string why;
  if (const int error = set_immutable(probe, true); error != 0) {
    why = "cannot make a file immutable in " + folder.string() +
          " (chattr +i: " + std::strerror(error) +
          "; it needs CAP_LINUX_IMMUTABLE and a file system with the flag)";
  } else {
    if (::write(fd, "x", 1) == 1)
      why = "an immutable file in " + folder.string() +
            " still takes writes through a descriptor opened before";
    set_immutable(probe, false);
  }
  ::close(fd);
  std::error_code ignored;
  std::filesystem::remove(probe, ignored);
  return why;
}

ImmutableFiles::ImmutableFiles(std::vector<std::filesystem::path> files) {
  for (const auto& file : files) {
    if (const int error = set_immutable(file, true); error != 0) {
      for (const auto& done : files_) set_immutable(done, false);  // no destructor will run
      throw std::system_error(error, std::generic_category(), "chattr +i " + file.string());
    }
    files_.push_back(file);
  }
}

ImmutableFiles::~ImmutableFiles() {
  for (const auto& file : files_) set_immutable(file, false);
}

}  // namespace kt::test
