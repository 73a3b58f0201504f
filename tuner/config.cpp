#include "tuner/config.hpp"

#include <charconv>
#include <stdexcept>

namespace kt {

std::string canonical_key(const std::map<std::string, std::int64_t>& values) {
  std::string key;
  for (const auto& [name, value] : values) {
    if (!key.empty()) key += ',';
    key += name;
    key += '=';
    key += std::to_string(value);
  }
  return key;
}

std::map<std::string, std::int64_t> parse_canonical_key(const std::string& key) {
  std::map<std::string, std::int64_t> values;
  std::size_t pos = 0;
  while (pos < key.size()) {
    std::size_t end = key.find(',', pos);
    if (end == std::string::npos) end = key.size();
    const std::string item = key.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("malformed key item '" + item + "'");
    std::int64_t value = 0;
    const char* first = item.data() + eq + 1;
    const char* last = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last || first == last)
      throw std::invalid_argument("malformed value in '" + item + "'");
    values[item.substr(0, eq)] = value;
    pos = end + 1;
  }
  return values;
}

nlohmann::json to_json(const std::map<std::string, std::int64_t>& values) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : values) j[name] = value;
  return j;
}

std::map<std::string, std::int64_t> int_map_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected an object of integers");
  std::map<std::string, std::int64_t> values;
  for (const auto& [name, value] : j.items()) {
    if (!value.is_number_integer())
      throw std::invalid_argument("field '" + name + "' must be an integer");
    values[name] = value.get<std::int64_t>();
  }
  return values;
}

}  // namespace kt
