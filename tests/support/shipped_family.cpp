#include "support/shipped_family.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "support/test_paths.hpp"

namespace kt::test {

const Family& shipped_family(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const Family>> loaded;
  std::lock_guard lock(mutex);
  auto& family = loaded[name];
  if (!family)
    family = std::make_unique<const Family>(load_family(source_dir() / "kernel_templates" / name));
  return *family;
}

FamilyRegistry shipped_families() {
  FamilyRegistry registry;
  registry.load_root(source_dir() / "kernel_templates");
  return registry;
}

}  // namespace kt::test
