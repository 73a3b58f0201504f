#include "server/request_parsing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "tuner/text.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

void add_dim(const Family& family, Shape& shape, const std::string& name, std::int64_t value) {
  const std::string dim = canonical_dim_name(family, name);
  if (shape.count(dim))
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                   "dimension " + dim + " is given twice");
  if (value < 0)
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                   "dimension " + dim + " must not be negative, got " + std::to_string(value));
  shape[dim] = value;
}

void check_shape(const Family& family, const Shape& shape, const std::string& dtype) {
  if (const auto problem = validate_shape(family, shape, dtype))
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape", *problem);
}

}  // namespace

std::int64_t parse_id(const std::string& text, const std::string& what) {
  const auto value = parse_decimal(text);
  if (!value || *value < 1)
    throw ApiError(HttpStatus::bad_request, "invalid_id",
                   what + " id must be a positive integer, got '" + text + "'");
  return *value;
}

std::int64_t parse_query_integer(const std::string& text, const std::string& name) {
  const auto value = parse_decimal(text);
  if (!value)
    throw ApiError(
        HttpStatus::bad_request, "invalid_parameter",
        "query parameter '" + name + "' must be a non-negative integer, got '" + text + "'");
  return *value;
}

const Family& require_family(const FamilyRegistry& families, const std::string& name) {
  if (const Family* family = families.find(name)) return *family;
  std::vector<std::string> known;
  for (const Family* family : families.all()) known.push_back(family->name);
  throw ApiError(HttpStatus::not_found, "unknown_family",
                 "unknown family '" + name + "'; known families: " +
                     (known.empty() ? std::string("(none loaded)") : joined(known)));
}

void require_dtype(const Family& family, const std::string& dtype) {
  if (std::find(family.dtypes.begin(), family.dtypes.end(), dtype) != family.dtypes.end()) return;
  throw ApiError(HttpStatus::unprocessable_entity, "unknown_dtype",
                 "family " + family.name + " has no dtype '" + dtype +
                     "'; it supports: " + joined(family.dtypes));
}

std::string canonical_dim_name(const Family& family, const std::string& name) {
  const std::string wanted = ascii_lower(name);
  for (const DimSpec& dim : family.dims)
    if (ascii_lower(dim.name) == wanted) return dim.name;
  return name;
}

Shape shape_from_json(const Family& family, const nlohmann::json& shape, const std::string& dtype) {
  if (!shape.is_object())
    throw ApiError(
        HttpStatus::bad_request, "invalid_field",
        "'shape' must be an object of integers, e.g. {\"M\":4096,\"N\":4096,\"K\":4096}");
  Shape result;
  for (const auto& [name, value] : shape.items()) {
    if (!value.is_number_integer())
      throw ApiError(HttpStatus::bad_request, "invalid_field",
                     "shape." + name + " must be an integer, got " + value.dump());
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                     "shape." + name + " is too large: " + value.dump());
    add_dim(family, result, name, value.get<std::int64_t>());
  }
  result = with_default_dims(family, std::move(result));
  check_shape(family, result, dtype);
  return result;
}

Shape shape_from_query(const Family& family, const std::map<std::string, std::string>& query,
                       const std::string& dtype) {
  Shape result;
  for (const auto& [name, text] : query) {
    const std::string dim = canonical_dim_name(family, name);
    const bool is_dim = std::any_of(family.dims.begin(), family.dims.end(),
                                    [&](const DimSpec& spec) { return spec.name == dim; });
    if (!is_dim) continue;
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
      throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                     "dimension " + dim + " must be an integer, got '" + text + "'");
    add_dim(family, result, name, value);
  }
  result = with_default_dims(family, std::move(result));
  check_shape(family, result, dtype);
  return result;
}

}  // namespace kt
