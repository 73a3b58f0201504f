// libFuzzer target: the bytes as a family's manifest.json through load_family, which reads a
// folder. One folder serves every run: manifest.json is rewritten each time, beside empty
// stand-ins for the source files the shipped manifests name (so that a shipped manifest, and
// most of its mutations, get past the source checks to the rest of the loader). FamilyError is
// the only exception load_family documents.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/unexpected_exception.hpp"
#include "support/test_paths.hpp"
#include "tuner/family.hpp"

namespace {

// Creates an empty file of every name the shipped manifests give as a template's or the
// reference's source.
void add_source_stand_ins(const std::filesystem::path& dir) {
  for (const auto& entry :
       std::filesystem::directory_iterator(kt::test::source_dir() / "kernel_templates")) {
    std::ifstream in(entry.path() / "manifest.json");
    if (!in) continue;
    const auto manifest = nlohmann::json::parse(in);
    std::vector<std::string> names;
    for (const auto& tmpl : manifest.value("templates", nlohmann::json::array()))
      names.push_back(tmpl.value("source", ""));
    names.push_back(manifest.value("reference", nlohmann::json::object()).value("source", ""));
    for (const std::string& name : names)
      if (!name.empty()) std::ofstream(dir / name).flush();
  }
}

struct FamilyFolder {
  kt::test::TempDir root;
  std::filesystem::path dir = root.path() / "fuzzed";

  FamilyFolder() {
    std::filesystem::create_directory(dir);
    add_source_stand_ins(dir);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FamilyFolder folder;
  {
    std::ofstream out(folder.dir / "manifest.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out.flush()) std::abort();  // the harness itself failed, not the loader
  }
  try {
    (void)kt::load_family(folder.dir);
  } catch (const kt::FamilyError&) {
    // A broken manifest, reported with the file and every problem.
  } catch (const std::exception& error) {
    kt::fuzz::abort_unexpected("family_manifest", error);
  } catch (...) {
    kt::fuzz::abort_unexpected("family_manifest");
  }
  return 0;
}
