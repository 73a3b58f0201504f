#include "client/shape_arg.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace kt {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::map<std::string, std::int64_t> parse_shape_arg(const std::string& text) {
  std::map<std::string, std::int64_t> shape;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (item.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("shape item '" + item + "' must be NAME=VALUE");
    const std::string name = trim(item.substr(0, eq));
    const std::string value = trim(item.substr(eq + 1));
    if (name.empty()) throw std::invalid_argument("shape item '" + item + "' has no name");
    std::int64_t extent = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), extent);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
      throw std::invalid_argument("shape item '" + item + "' needs an integer value");
    for (const auto& [existing, ignored] : shape)
      if (lower(existing) == lower(name))
        throw std::invalid_argument("dimension '" + name + "' is given twice");
    shape[name] = extent;
  }
  if (shape.empty()) throw std::invalid_argument("empty shape; expected e.g. m=4096,n=4096,k=4096");
  return shape;
}

std::map<std::string, std::int64_t> match_family_dims(
    const std::map<std::string, std::int64_t>& shape, const nlohmann::json& family) {
  std::map<std::string, std::int64_t> matched;
  for (const auto& [name, extent] : shape) {
    std::string spelled = name;
    if (family.contains("dims") && family["dims"].is_array())
      for (const auto& dim : family["dims"]) {
        const std::string dim_name = dim.value("name", "");
        if (lower(dim_name) == lower(name)) spelled = dim_name;
      }
    matched[spelled] = extent;
  }
  return matched;
}

}  // namespace kt
