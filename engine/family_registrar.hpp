// Families over the API: a client's manifest and device sources become a family the daemon
// serves. submit() checks the upload where it is called (names, sizes, the manifest as
// load_family reads it) and queues the rest on the registrar's own thread, off the I/O threads and
// the query pool: compiling one variant and the reference kernel with NVRTC, then storing the
// version (the store is the authority; the daemon-owned folder <root>/<name>/<source hash>/ is
// written from it) and serving it in place of the older version of its name, whose results are
// then stale (family_hash).
// A registration is kept in the store from the upload to its outcome (the client reads it with
// GET /v1/families/registrations/{id}); a failed one changes nothing but its own status. A
// restarted daemon compiles again the registrations it was compiling (resume()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "engine/compile_client.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/family.hpp"
#include "tuner/paths.hpp"

namespace kt {

// Limits on an upload (the HTTP body limit caps the whole of it too).
inline constexpr std::size_t kMaxFamilySources = 32;
inline constexpr std::size_t kMaxFamilySourceBytes = 256 * 1024;
inline constexpr std::size_t kMaxFamilyNameChars = 64;

// An identifier of at most kMaxFamilyNameChars: [A-Za-z_][A-Za-z0-9_]*.
bool is_safe_family_name(std::string_view name);
// [A-Za-z0-9_]+ then .cuh, .cu or .h, at most kMaxFamilyNameChars: never a path.
bool is_safe_source_name(std::string_view name);

struct FamilyUpload {
  nlohmann::ordered_json manifest;  // as sent (axis order matters); its "name" names the family
  std::vector<std::pair<std::string, std::string>> sources;  // file name -> text
};

// An upload refused before anything was written: bad names or sizes (the caller's 400/413 had
// it checked first), the manifest (every problem load_family found), a shipped family's name.
class FamilyUploadError : public std::runtime_error {
 public:
  enum class Kind { invalid_upload, too_large, invalid_manifest, name_taken };
  FamilyUploadError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Its status, and the variant compiled before accepting (compile_json: template, kernel, arch,
// dtype, config, ok, log, ..., and "reference": the reference kernel's compile, if it is one).
using FamilyRegistration = FamilyRegistrationRecord;

class FamilyRegistrar {
 public:
  // root: the daemon-owned folder the families are written to (created if needed). common: the
  // shipped families' common/ folder, whose headers a registered family sees as a shipped one
  // does: those the upload includes are copied in with it, so a version compiles and hashes as it
  // was accepted whatever a later daemon ships (empty: none). archs: the archs of this host's GPUs,
  // preferred for the compile when a template is written for them. nice: the compile thread's
  // priority below the daemon's (as --compile-nice for jobs); the compile runs in that thread's
  // compile process (engine/compile_client.hpp), so a family whose source crashes NVRTC fails its
  // registration and leaves the daemon up.
  FamilyRegistrar(Store& store, FamilyRegistry& registry, std::filesystem::path root,
                  std::filesystem::path common, std::vector<std::string> archs = {}, int nice = 0,
                  CompileProcessOptions compiler = {default_worker_path()});
  ~FamilyRegistrar();  // leaves the queued registrations to the next daemon
  FamilyRegistrar(const FamilyRegistrar&) = delete;
  FamilyRegistrar& operator=(const FamilyRegistrar&) = delete;

  // Serves the newest stored version of every registered family (written out to root again),
  // after a restart. A version that no longer loads is reported in the registry's errors.
  // Returns how many were loaded.
  std::size_t reload();

  // Queues again the compiles of the registrations that were compiling when a daemon stopped
  // (those no live daemon holds), after reload(). Returns how many.
  std::size_t resume();

  // Checks the upload, stores the registration and queues its compile: the registration,
  // compiling, or registered and unchanged (not stored) when this very version is already served.
  // Throws FamilyUploadError.
  FamilyRegistration submit(const FamilyUpload& upload);
  // From the store: any daemon on the database answers, a restarted one too.
  std::optional<FamilyRegistration> find(const std::string& id) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  // The registration's upload is in staged; its outcome goes to the store.
  void compile_and_register(FamilyRegistration registration, const std::filesystem::path& staged);
  // Stopping: the registration stays compiling in the store, and resume() takes it up again.
  void left_for_restart(const FamilyRegistration& registration);
  std::filesystem::path write_family(
      const std::filesystem::path& dir, const std::string& manifest_text,
      const std::vector<std::pair<std::string, std::string>>& sources);
  // An upload written to its staging folder, with the common/ headers it includes and does not
  // have a file of that name of its own for.
  void stage(const std::filesystem::path& dir, const std::string& manifest_text,
             const std::vector<std::pair<std::string, std::string>>& sources);

  Store& store_;
  FamilyRegistry& registry_;
  std::filesystem::path root_;
  std::filesystem::path common_;
  std::vector<std::string> archs_;
  CompileProcessOptions compiler_;
  std::atomic<bool> stopping_{false};   // the destructor ran: queued work is left
  std::unique_ptr<ThreadPool> worker_;  // last: joined first
};

}  // namespace kt
