// Reads the fields of one JSON object of a process protocol (measure and compile requests and
// answers) and names the full path of a missing or mistyped field ("missing field
// 'full.launch.grid'"), so a protocol mismatch between two builds is obvious.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace kt {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw std::invalid_argument(where("") + " must be a JSON object");
  }

  bool has(const char* field) const { return j_.contains(field) && !j_.at(field).is_null(); }

  const nlohmann::json& at(const char* field) const {
    if (!has(field)) throw std::invalid_argument("missing field '" + where(field) + "'");
    return j_.at(field);
  }

  template <typename T>
  T get(const char* field) const {
    const nlohmann::json& value = at(field);
    if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) throw wrong_type(field, "a boolean");
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) throw wrong_type(field, "a string");
    } else if constexpr (std::is_integral_v<T>) {
      if (!value.is_number_integer()) throw wrong_type(field, "an integer");
      if (std::is_unsigned_v<T> && !value.is_number_unsigned() && value.get<std::int64_t>() < 0)
        throw wrong_type(field, "a non-negative integer");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!value.is_number()) throw wrong_type(field, "a number");
    }
    return value.get<T>();
  }

  JsonFields object(const char* field) const { return JsonFields(at(field), where(field)); }

  std::string where(const char* field) const {
    if (*field == '\0') return path_;
    return path_.empty() ? std::string(field) : path_ + "." + field;
  }

  std::invalid_argument wrong_type(const char* field, const char* expected) const {
    return std::invalid_argument("field '" + where(field) + "' must be " + expected);
  }

 private:
  const nlohmann::json& j_;
  std::string path_;
};

}  // namespace kt
