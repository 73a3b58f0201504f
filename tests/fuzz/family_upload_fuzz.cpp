// libFuzzer target: bytes as the body of POST /v1/families through every check the handler runs
// before anything is stored or compiled: parse_family_upload (the body's limit, JSON with its depth
// limit, the fields, source names and sizes, the family name), then check_family_upload (the
// registrar's name and size checks, a shipped family's name, the upload staged with the common/
// headers it includes and read by load_family). The NVRTC compile and the store are left out.
// ApiError and FamilyUploadError are the documented refusals. Beyond the sanitizers each run must
// keep to its staging folder (no file outside it, nothing left after a refusal, only safe names
// after an acceptance) and a refusal's message must stay short, whatever the body quoted.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/family_upload_check.hpp"
#include "fuzz/fuzz_app.hpp"
#include "fuzz/unexpected_exception.hpp"
#include "server/family_handlers.hpp"
#include "support/test_paths.hpp"
#include "tuner/family.hpp"

namespace {

// 20 problems of at most 512 bytes each (tuner/manifest_reader.hpp) and their separators: a
// message longer than this quoted more of the client's text than the cap allows.
constexpr std::size_t kMaxMessageBytes = 16 * 1024;

struct Staging {
  kt::test::TempDir root;
  std::filesystem::path staged = root.path() / "staged";
  std::filesystem::path common =
      kt::test::source_dir() / "kernel_templates" / kt::kCommonSourcesFolder;
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "family_upload: %s\n", why.c_str());
  std::abort();
}

// Every file the run left under the root must be in the staging folder, under a safe name.
void check_folder(const Staging& staging, bool accepted) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(staging.root.path(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    if (path == staging.staged) continue;
    if (!accepted) fail("a refused upload left " + path.string());
    if (path.parent_path() != staging.staged)
      fail("a file outside the staging folder: " + path.string());
    const std::string name = path.filename().string();
    if (it->is_symlink() || !it->is_regular_file()) fail("not a plain file: " + path.string());
    if (name != "manifest.json" && !kt::is_safe_source_name(name))
      fail("an unsafe file name was written: " + name);
  }
  std::filesystem::remove_all(staging.staged, ec);
}

void check_message(const std::string& message) {
  if (message.size() > kMaxMessageBytes)
    fail("a refusal of " + std::to_string(message.size()) + " bytes: " + message.substr(0, 300));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Staging staging;
  const kt::AppContext& context = kt::fuzz::app_context();
  const std::string body(reinterpret_cast<const char*>(data), size);
  bool accepted = false;
  try {
    const kt::FamilyUpload upload = kt::parse_family_upload(body, context.max_body_bytes);
    (void)kt::check_family_upload(upload, context.families, staging.staged, staging.common);
    accepted = true;
  } catch (const kt::ApiError& error) {
    check_message(error.what());  // 400 or 413 before the registrar
  } catch (const kt::FamilyUploadError& error) {
    check_message(kt::family_upload_refusal(error).what());
  } catch (const std::exception& error) {
    kt::fuzz::abort_unexpected("family_upload", error);
  } catch (...) {
    kt::fuzz::abort_unexpected("family_upload");
  }
  check_folder(staging, accepted);
  return 0;
}
