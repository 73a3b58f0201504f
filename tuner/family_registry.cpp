// FamilyRegistry (declared in tuner/family.hpp): every family found under the configured roots,
// and the families clients registered.
#include <algorithm>
#include <mutex>

#include "tuner/family.hpp"

namespace kt {
namespace {

const Family* find_in(const std::vector<std::unique_ptr<Family>>& families,
                      const std::string& name) {
  for (const auto& family : families)
    if (family->name == name) return family.get();
  return nullptr;
}

}  // namespace

FamilyRegistry::FamilyRegistry(FamilyRegistry&& other) noexcept {
  std::unique_lock lock(other.mutex_);
  families_ = std::move(other.families_);
  replaced_ = std::move(other.replaced_);
  errors_ = std::move(other.errors_);
}

FamilyRegistry& FamilyRegistry::operator=(FamilyRegistry&& other) noexcept {
  if (this == &other) return *this;
  std::scoped_lock lock(mutex_, other.mutex_);
  families_ = std::move(other.families_);
  replaced_ = std::move(other.replaced_);
  errors_ = std::move(other.errors_);
  return *this;
}

void FamilyRegistry::load_root(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    add_error(root.string() + ": not a directory of kernel families");
    return;
  }
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec))
    if (entry.is_directory() && std::filesystem::is_regular_file(entry.path() / "manifest.json"))
      dirs.push_back(entry.path());
  if (ec) add_error(root.string() + ": " + ec.message());
  std::sort(dirs.begin(), dirs.end());  // a stable order for GET /v1/families
  for (const auto& dir : dirs) {
    try {
      add(load_family(dir));
    } catch (const std::exception& e) {
      add_error(e.what());
    }
  }
}

void FamilyRegistry::add(Family family) {
  std::unique_lock lock(mutex_);
  if (const Family* taken = find_in(families_, family.name))
    throw FamilyError(family.dir.string() + ": family name '" + family.name +
                      "' is already taken by " + taken->dir.string());
  families_.push_back(std::make_unique<Family>(std::move(family)));
}

void FamilyRegistry::put_registered(Family family) {
  family.registered = true;
  std::unique_lock lock(mutex_);
  for (auto& slot : families_) {
    if (slot->name != family.name) continue;
    if (!slot->registered)
      throw FamilyError("family name '" + family.name +
                        "' is a shipped family's; a registered family cannot replace it");
    replaced_.push_back(std::move(slot));
    slot = std::make_unique<Family>(std::move(family));
    return;
  }
  families_.push_back(std::make_unique<Family>(std::move(family)));
}

const Family* FamilyRegistry::find(const std::string& name) const {
  std::shared_lock lock(mutex_);
  return find_in(families_, name);
}

std::vector<const Family*> FamilyRegistry::all() const {
  std::shared_lock lock(mutex_);
  std::vector<const Family*> out;
  for (const auto& family : families_) out.push_back(family.get());
  return out;
}

std::vector<std::string> FamilyRegistry::errors() const {
  std::shared_lock lock(mutex_);
  return errors_;
}

void FamilyRegistry::add_error(std::string error) {
  std::unique_lock lock(mutex_);
  errors_.push_back(std::move(error));
}

}  // namespace kt
