#include "tuner/manifest_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "tuner/client_values.hpp"
#include "tuner/expression.hpp"
#include "tuner/family.hpp"

namespace kt {

void ManifestReader::error(const std::string& where, const std::string& message) {
  std::string problem = where.empty() ? message : where + ": " + message;
  // Values are quoted short where a message is written; this bounds the rest, such as a list of
  // the family's own names (a manifest may declare thousands).
  if (problem.size() > kMaxProblemChars) {
    const std::size_t size = problem.size();
    std::size_t cut = kMaxProblemChars;
    while (cut > 0 && (static_cast<unsigned char>(problem[cut]) & 0xC0) == 0x80) --cut;
    problem.resize(cut);
    problem += "... (" + std::to_string(size) + " bytes)";
  }
  errors_.push_back(std::move(problem));
}

void ManifestReader::throw_if_errors() const {
  if (errors_.empty()) return;
  std::string text = file_.string() + ": ";
  for (std::size_t i = 0; i < errors_.size() && i < kMaxReportedProblems; ++i) {
    if (i > 0) text += "; ";
    text += errors_[i];
  }
  if (errors_.size() > kMaxReportedProblems)
    text += "; and " + std::to_string(errors_.size() - kMaxReportedProblems) + " more problems";
  throw FamilyError(text);
}

const ManifestJson* ManifestReader::member(const ManifestJson& object, const std::string& key,
                                           const std::string& where, bool required) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (required) error(field_path(where, key), "required field is missing");
    return nullptr;
  }
  return &*found;
}

std::optional<std::string> ManifestReader::string_field(const ManifestJson& object,
                                                        const std::string& key,
                                                        const std::string& where, bool required) {
  const ManifestJson* value = member(object, key, where, required);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    error(field_path(where, key), "must be a string");
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<std::int64_t> ManifestReader::integer_field(const ManifestJson& object,
                                                          const std::string& key,
                                                          const std::string& where, bool required) {
  const ManifestJson* value = member(object, key, where, required);
  if (value == nullptr) return std::nullopt;
  if (!within_exact_range(*value, field_path(where, key))) return std::nullopt;
  if (!value->is_number_integer()) {
    error(field_path(where, key), "must be an integer");
    return std::nullopt;
  }
  return value->get<std::int64_t>();
}

bool ManifestReader::within_exact_range(const ManifestJson& value, const std::string& where) {
  bool outside = false;
  if (value.is_number_unsigned())
    outside = value.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxExactInteger);
  else if (value.is_number_integer())
    outside = value.get<std::int64_t>() < -kMaxExactInteger ||
              value.get<std::int64_t>() > kMaxExactInteger;
  else if (value.is_number_float())
    outside = std::fabs(value.get<double>()) > static_cast<double>(kMaxExactInteger);
  if (!outside) return true;
  error(where, value.dump() + " is outside the exact integer range (" + kExactIntegerRange +
                   "): expressions evaluate in doubles, which hold no larger integer exactly");
  return false;
}

std::vector<std::string> ManifestReader::string_list(const ManifestJson& object,
                                                     const std::string& key,
                                                     const std::string& where, bool required) {
  std::vector<std::string> items;
  const ManifestJson* value = member(object, key, where, required);
  if (value == nullptr) return items;
  const std::string path = field_path(where, key);
  if (!value->is_array()) {
    error(path, "must be a list of strings");
    return items;
  }
  for (std::size_t i = 0; i < value->size(); ++i) {
    if ((*value)[i].is_string())
      items.push_back((*value)[i].get<std::string>());
    else
      error(field_path(path, i), "must be a string");
  }
  return items;
}

std::optional<std::string> ManifestReader::expression(const ManifestJson& value,
                                                      const std::string& where) {
  std::string text;
  if (value.is_string())
    text = value.get<std::string>();
  else if (!within_exact_range(value, where))
    return std::nullopt;
  else if (value.is_number_integer())
    text = std::to_string(value.get<std::int64_t>());
  else {
    error(where, "must be an expression (a string) or an integer");
    return std::nullopt;
  }
  try {
    shared_expression(text);  // parses, and warms the cache instantiate() uses
  } catch (const ExpressionError& e) {
    error(where, e.what());
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ManifestReader::expression_field(const ManifestJson& object,
                                                            const std::string& key,
                                                            const std::string& where,
                                                            bool required) {
  const ManifestJson* value = member(object, key, where, required);
  if (value == nullptr) return std::nullopt;
  return expression(*value, field_path(where, key));
}

void ManifestReader::reject_unknown_keys(const ManifestJson& object,
                                         std::initializer_list<const char*> allowed,
                                         const std::string& where) {
  for (const auto& [key, unused] : object.items()) {
    if (!key.empty() && (key[0] == '_' || key[0] == '$')) continue;
    // An init-capture: clang 14 (the fuzz build) cannot capture a structured binding.
    const bool known = std::any_of(allowed.begin(), allowed.end(),
                                   [&field = key](const char* name) { return field == name; });
    if (known) continue;
    std::string expected;
    for (const char* name : allowed) expected += (expected.empty() ? "" : ", ") + std::string(name);
    error(field_path(where, key), "unknown field (expected one of: " + expected + ")");
  }
}

bool ManifestReader::expect_object(const ManifestJson& value, const std::string& where) {
  if (value.is_object()) return true;
  error(where, "must be an object");
  return false;
}

std::string field_path(const std::string& parent, const std::string& key) {
  const std::string shown =
      key.size() <= kQuotedPrefixChars && is_identifier(key) ? key : quote_client_text(key);
  return parent.empty() ? shown : parent + "." + shown;
}

std::string field_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace kt
