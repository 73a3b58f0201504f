#include "tuner/compile/compile_confinement.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kt {
namespace {

// The kernel's ABI, spelled out here: Debian's userspace headers may predate the kernel's, and
// rights a newer kernel knows are rights this process should give up too.
constexpr std::uint64_t kFsRightsAbi1 = (1ull << 13) - 1;  // execute .. make_sym
constexpr std::uint64_t kFsRefer = 1ull << 13;             // ABI 2
constexpr std::uint64_t kFsTruncate = 1ull << 14;          // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ull << 15;          // ABI 5
constexpr std::uint64_t kFsReadFile = 1ull << 2;
constexpr std::uint64_t kFsReadDir = 1ull << 3;
constexpr std::uint64_t kNetBindConnectTcp = 0b11;   // ABI 4
constexpr std::uint64_t kScopeUnixAndSignal = 0b11;  // ABI 6: abstract unix sockets, signals

struct RulesetAttr {  // struct landlock_ruleset_attr as of ABI 6
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

struct PathBeneathAttr {  // struct landlock_path_beneath_attr (packed in the kernel's header)
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

constexpr int kRulePathBeneath = 1;
constexpr unsigned kCreateRulesetVersion = 1u << 0;

std::string errno_text(int error) {
  return std::strerror(error);
}

class Fd {  // closes on scope exit; the only descriptors here are the ruleset and its folders
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

ConfinementSupport landlock_support() {
  ConfinementSupport support;
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi > 0) {
    support.abi = static_cast<int>(abi);
    return support;
  }
  const int error = errno;
  if (error == ENOSYS)
    support.why_not =
        "the kernel has no Landlock (ENOSYS: older than Linux 5.13, or a seccomp "
        "filter hides it)";
  else if (error == EOPNOTSUPP)
    support.why_not =
        "Landlock is built into the kernel but not enabled (EOPNOTSUPP: add "
        "landlock to the lsm= boot parameter)";
  else
    support.why_not = "landlock_create_ruleset failed: " + errno_text(error);
  return support;
}

void confine_to_reading(const std::vector<std::filesystem::path>& readable) {
  const ConfinementSupport support = landlock_support();
  if (!support.available()) throw ConfinementError(support.why_not);
  RulesetAttr attr;
  attr.handled_access_fs = kFsRightsAbi1;
  if (support.abi >= 2) attr.handled_access_fs |= kFsRefer;
  if (support.abi >= 3) attr.handled_access_fs |= kFsTruncate;
  if (support.abi >= 5) attr.handled_access_fs |= kFsIoctlDev;
  if (support.abi >= 4) attr.handled_access_net = kNetBindConnectTcp;
  if (support.abi >= 6) attr.scoped = kScopeUnixAndSignal;
  const std::size_t attr_size = support.abi >= 6   ? sizeof attr
                                : support.abi >= 4 ? 2 * sizeof(std::uint64_t)
                                                   : sizeof(std::uint64_t);
  const Fd ruleset(static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  if (ruleset.get() < 0)
    throw ConfinementError("landlock_create_ruleset failed: " + errno_text(errno));
  for (const std::filesystem::path& dir : readable) {
    const Fd folder(::open(dir.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (folder.get() < 0)
      throw ConfinementError("cannot open " + dir.string() +
                             " to allow reading it: " + errno_text(errno));
    PathBeneathAttr rule{kFsReadFile | kFsReadDir, folder.get()};
    if (syscall(SYS_landlock_add_rule, ruleset.get(), kRulePathBeneath, &rule, 0) != 0)
      throw ConfinementError("landlock_add_rule for " + dir.string() +
                             " failed: " + errno_text(errno));
  }
  // Required to restrict oneself without CAP_SYS_ADMIN; also keeps setuid binaries inert.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    throw ConfinementError("prctl(PR_SET_NO_NEW_PRIVS) failed: " + errno_text(errno));
  if (syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
    throw ConfinementError("landlock_restrict_self failed: " + errno_text(errno));
}

}  // namespace kt
