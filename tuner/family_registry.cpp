// FamilyRegistry (declared in tuner/family.hpp): every family found under the configured roots.
#include <algorithm>

#include "tuner/family.hpp"

namespace kt {

void FamilyRegistry::load_root(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    errors_.push_back(root.string() + ": not a directory of kernel families");
    return;
  }
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec))
    if (entry.is_directory() && std::filesystem::is_regular_file(entry.path() / "manifest.json"))
      dirs.push_back(entry.path());
  if (ec) errors_.push_back(root.string() + ": " + ec.message());
  std::sort(dirs.begin(), dirs.end());  // a stable order for GET /v1/families
  for (const auto& dir : dirs) {
    try {
      add(load_family(dir));
    } catch (const std::exception& e) {
      errors_.push_back(e.what());
    }
  }
}

void FamilyRegistry::add(Family family) {
  if (find(family.name) != nullptr)
    throw FamilyError(family.dir.string() + ": family name '" + family.name +
                      "' is already taken by " + find(family.name)->dir.string());
  families_.push_back(std::make_unique<Family>(std::move(family)));
}

const Family* FamilyRegistry::find(const std::string& name) const {
  for (const auto& family : families_)
    if (family->name == name) return family.get();
  return nullptr;
}

std::vector<const Family*> FamilyRegistry::all() const {
  std::vector<const Family*> out;
  for (const auto& family : families_) out.push_back(family.get());
  return out;
}

}  // namespace kt
