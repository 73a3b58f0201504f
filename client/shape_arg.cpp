#include "client/shape_arg.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>
#include <vector>

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

bool is_positional_shape(const std::string& text) {
  if (text.empty() || text.front() == 'x' || text.back() == 'x') return false;
  bool previous_x = false;
  for (const char c : text) {
    const bool is_x = c == 'x' || c == 'X';
    if (!is_x && !std::isdigit(static_cast<unsigned char>(c))) return false;
    if (is_x && previous_x) return false;
    previous_x = is_x;
  }
  return true;
}

std::map<std::string, std::int64_t> shape_for_family(const std::string& text,
                                                     const nlohmann::json& family) {
  if (!is_positional_shape(trim(text))) {
    const auto shape = parse_shape_arg(text);
    return family.is_object() ? match_family_dims(shape, family) : shape;
  }
  std::vector<std::string> dims;
  std::size_t required = 0;  // dims up to the last one without a default
  if (family.is_object() && family.contains("dims") && family["dims"].is_array())
    for (const auto& dim : family["dims"]) {
      dims.push_back(dim.value("name", ""));
      if (!dim.contains("default")) required = dims.size();
    }
  // An unknown family: no dims to name the extents by, and the server refuses the family itself
  // (checked before the shape) with the list of the known ones.
  if (dims.empty()) return {};
  std::vector<std::int64_t> extents;
  const std::string digits = trim(text);
  std::size_t pos = 0;
  while (pos <= digits.size()) {
    std::size_t end = digits.find_first_of("xX", pos);
    if (end == std::string::npos) end = digits.size();
    std::int64_t extent = 0;
    const auto [ptr, ec] = std::from_chars(digits.data() + pos, digits.data() + end, extent);
    if (ec != std::errc() || ptr != digits.data() + end)
      throw std::invalid_argument("shape '" + text + "': extent out of range");
    extents.push_back(extent);
    pos = end + 1;
  }
  std::string names;
  for (const auto& name : dims) names += (names.empty() ? "" : "x") + name;
  // Trailing dims with defaults may be left out (gemm_fp8's MxNxK is per-tensor scaled); the
  // daemon fills them in.
  if (extents.size() > dims.size() || extents.size() < required)
    throw std::invalid_argument(
        "shape '" + text + "' has " + std::to_string(extents.size()) + " extent(s); family " +
        family.value("name", std::string("?")) + " has " + std::to_string(dims.size()) +
        " dims, given in this order: " + names +
        (required < dims.size() ? " (the last " + std::to_string(dims.size() - required) +
                                      " with defaults may be left out)"
                                : "") +
        " (or use NAME=VALUE)");
  std::map<std::string, std::int64_t> shape;
  for (std::size_t i = 0; i < extents.size(); ++i) shape[dims[i]] = extents[i];
  return shape;
}

}  // namespace kt
