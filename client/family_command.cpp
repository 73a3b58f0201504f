#include "client/family_command.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <vector>

#include "client/kerntune_client.hpp"

namespace kt {
namespace {

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string text_field(const nlohmann::json& json, const char* key) {
  const auto found = json.find(key);
  return found != json.end() && found->is_string() ? found->get<std::string>() : "";
}

}  // namespace

nlohmann::ordered_json family_upload_from_dir(const std::filesystem::path& dir) {
  const auto manifest_file = dir / "manifest.json";
  nlohmann::ordered_json upload;
  try {
    upload["manifest"] = nlohmann::ordered_json::parse(file_text(manifest_file));
  } catch (const nlohmann::json::parse_error& error) {
    throw std::runtime_error(manifest_file.string() + " is not JSON: " + error.what());
  }
  std::vector<std::filesystem::path> sources;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cuh" && extension != ".cu" && extension != ".h"))
      continue;
    // A link that leads out of the folder would send a file the user never meant to share.
    if (entry.is_symlink()) {
      const auto target = std::filesystem::weakly_canonical(entry.path());
      const auto folder = std::filesystem::weakly_canonical(dir);
      const auto [end, _] = std::mismatch(folder.begin(), folder.end(), target.begin(), target.end());
      if (end != folder.end())
        throw std::runtime_error(entry.path().string() + " is a symbolic link to " +
                                 target.string() + ", outside the family's folder: not uploaded "
                                 "(copy the file into the folder instead)");
    }
    sources.push_back(entry.path());
  }
  if (ec) throw std::runtime_error("cannot list " + dir.string() + ": " + ec.message());
  std::sort(sources.begin(), sources.end());
  upload["sources"] = nlohmann::ordered_json::object();
  for (const auto& file : sources) upload["sources"][file.filename().string()] = file_text(file);
  return upload;
}

int run_family_add(const CliContext& ctx, const std::filesystem::path& dir,
                   std::chrono::milliseconds poll) {
  const nlohmann::ordered_json upload = family_upload_from_dir(dir);
  nlohmann::json registration = ctx.client.register_family(upload);
  const std::string name = text_field(registration, "family");
  const std::string version = text_field(registration, "source_hash").substr(0, 12);
  if (!ctx.json && registration.value("status", "") == "compiling")
    ctx.err << "family " << name << " (version " << version
            << "): checked, compiling one variant...\n";
  while (registration.value("status", "") == "compiling") {
    std::this_thread::sleep_for(poll);
    registration = ctx.client.family_registration(text_field(registration, "id"));
  }
  const bool registered = registration.value("status", "") == "registered";
  if (ctx.json) {
    ctx.out << registration.dump(2) << '\n';
    return registered ? kExitOk : kExitError;
  }
  const nlohmann::json compile = registration.value("compile", nlohmann::json());
  if (!registered) {
    ctx.err << "family " << name << " not registered: " << text_field(registration, "message")
            << '\n';
    // The log of what failed: the variant, or after it the reference kernel.
    if (compile.is_object() && !compile.value("ok", false) && !text_field(compile, "log").empty())
      ctx.err << "NVRTC log:\n" << text_field(compile, "log") << '\n';
    const nlohmann::json reference =
        compile.is_object() ? compile.value("reference", nlohmann::json()) : nlohmann::json();
    if (reference.is_object() && !reference.value("ok", false) &&
        !text_field(reference, "log").empty())
      ctx.err << "NVRTC log of the reference kernel:\n" << text_field(reference, "log") << '\n';
    return kExitError;
  }
  ctx.out << "family " << name << " registered (version " << version << ")";
  if (registration.value("unchanged", false))
    ctx.out << ": this version was already registered\n";
  else if (compile.is_object())
    ctx.out << ": " << text_field(compile, "template") << " "
            << compile.value("config", nlohmann::json()).dump() << " compiled for "
            << text_field(compile, "arch") << " in "
            << static_cast<long long>(compile.value("compile_ms", 0.0)) << " ms\n";
  else
    ctx.out << '\n';
  if (registration["previous_hash"].is_string())
    ctx.out << "results of the previous version ("
            << registration["previous_hash"].get<std::string>().substr(0, 12)
            << ") are now stale\n";
  return kExitOk;
}

}  // namespace kt
