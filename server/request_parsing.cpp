#include "server/request_parsing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "tuner/manifest_reader.hpp"  // field_path
#include "tuner/nearest_name.hpp"
#include "tuner/text.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

namespace {

// Shape constraints and launch formulas evaluate in doubles: a larger dim would be rounded
// (2^53 + 1 read as 2^53), so it is refused rather than tuned as another shape.
ApiError outside_exact_range(const std::string& what, const std::string& value) {
  return ApiError(
      HttpStatus::unprocessable_entity, "invalid_shape",
      what + " = " + value + " is outside the exact integer range (" + kExactIntegerRange + ")");
}

void add_dim(const Family& family, Shape& shape, const std::string& name, std::int64_t value) {
  const std::string dim = canonical_dim_name(family, name);
  if (shape.count(dim))
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                   "dimension " + dim + " is given twice");
  if (value < 0)
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                   "dimension " + dim + " must not be negative, got " + std::to_string(value));
  if (value > kMaxExactInteger)
    throw outside_exact_range("dimension " + dim, std::to_string(value));
  shape[dim] = value;
}

void check_shape(const Family& family, const Shape& shape, const std::string& dtype) {
  if (const auto problem = validate_shape(family, shape, dtype))
    throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape", *problem);
}

// Follows nlohmann's parse callback events: refuses a container that would nest deeper than
// kMaxJsonDepth before the parser reads into it, and knows the path of the value being read, so a
// number that overflows can be named ("shape.m", "configs[2].BM").
class BodyParseGuard {
 public:
  bool on_event(int depth, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        // depth counts the containers already open around this one.
        if (depth >= kMaxJsonDepth)
          throw ApiError(HttpStatus::bad_request, "nesting_too_deep",
                         "request body nests arrays and objects deeper than the limit of " +
                             std::to_string(kMaxJsonDepth) + " levels");
        levels_.push_back({event == Event::array_start, "", 0});
        break;
      case Event::key:
        // A path only names the field; a longer key is cut when quoted anyway.
        levels_.back().key = parsed.get_ref<const std::string&>().substr(0, kMaxNameChars);
        break;
      case Event::value:
        next_element();
        break;
      case Event::object_end:
      case Event::array_end:
        levels_.pop_back();
        next_element();
        break;
    }
    return true;  // keep every value
  }

  // "shape.m", "configs[0].BM"; empty for a value at the top.
  std::string path() const {
    std::string text;
    for (const Level& level : levels_) {
      if (level.is_array)
        text += "[" + std::to_string(level.index) + "]";
      else
        text += (text.empty() ? "" : ".") + level.key;
    }
    return text;
  }

 private:
  struct Level {
    bool is_array;
    std::string key;        // objects: the key of the member being read
    std::size_t index = 0;  // arrays: the element being read
  };

  void next_element() {
    if (!levels_.empty() && levels_.back().is_array) ++levels_.back().index;
  }

  std::vector<Level> levels_;
};

// nlohmann's messages end with the token it read ("...; last read: '<token>'", "number overflow
// parsing '<token>'"), which can be most of the body: keep the text, quote only a short prefix.
std::string with_short_token(const std::string& message, const std::string& marker) {
  const auto start = message.find(marker);
  if (start == std::string::npos) return message;
  std::string token = message.substr(start + marker.size());
  std::string after;
  if (const auto expected = token.rfind("'; expected "); expected != std::string::npos) {
    after = token.substr(expected + 1);
    token.resize(expected);
  } else if (!token.empty() && token.back() == '\'') {
    token.pop_back();
  }
  return message.substr(0, start + marker.size() - 1) + quote_client_text(token) + after;
}

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string without_exception_tag(const std::string& message) {
  if (message.empty() || message.front() != '[') return message;
  const auto end = message.find("] ");
  return end == std::string::npos ? message : message.substr(end + 2);
}

}  // namespace

nlohmann::json parse_json_body(std::string_view body) {
  // nlohmann reads a NUL byte as the end of the input, so NUL padding after a value would pass.
  // No JSON text holds one (a string must escape it), so any NUL is refused here.
  if (const auto nul = body.find('\0'); nul != std::string_view::npos)
    throw ApiError(HttpStatus::bad_request, "invalid_json",
                   "request body is not valid JSON: a NUL byte at byte " + std::to_string(nul) +
                       " (only whitespace may follow the JSON value)");
  BodyParseGuard guard;
  try {
    return nlohmann::json::parse(
        body.begin(), body.end(),
        [&guard](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          return guard.on_event(depth, event, parsed);
        });
  } catch (const nlohmann::json::out_of_range& error) {
    // 406: a number the lexer read that a double cannot hold (1e99999).
    const std::string path = guard.path();
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   (path.empty() ? std::string("the body") : "field " + quote_client_text(path)) +
                       " holds a number out of range: " +
                       without_exception_tag(with_short_token(error.what(), "parsing '")));
  } catch (const nlohmann::json::exception& error) {
    // Trailing bytes other than whitespace land here too ("expected end of input").
    throw ApiError(HttpStatus::bad_request, "invalid_json",
                   "request body is not valid JSON: " +
                       without_exception_tag(with_short_token(error.what(), "last read: '")));
  }
}

std::string describe_client_value(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return "the string " + quote_client_text(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array:
      return "an array of " + std::to_string(value.size()) + " elements";
    case nlohmann::json::value_t::object:
      return "an object of " + std::to_string(value.size()) + " fields";
    case nlohmann::json::value_t::binary:
      return "binary data";
    default:
      return value.dump();  // null, a boolean or a number: short
  }
}

std::int64_t parse_id(const std::string& text, const std::string& what) {
  const auto value = parse_decimal(text);
  if (!value || *value < 1)
    throw ApiError(HttpStatus::bad_request, "invalid_id",
                   what + " id must be a positive integer, got " + quote_client_text(text));
  return *value;
}

std::int64_t parse_query_integer(const std::string& text, const std::string& name) {
  const auto value = parse_decimal(text);
  if (!value)
    throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                   "query parameter " + quote_client_text(name) +
                       " must be a non-negative integer, got " + quote_client_text(text));
  return *value;
}

std::string unknown_family_message(const FamilyRegistry& families, const std::string& name) {
  std::vector<std::string> known;
  for (const Family* family : families.all()) known.push_back(family->name);
  return "unknown family " + quote_client_text(name) + did_you_mean(name, known) +
         "; known families: " + (known.empty() ? std::string("(none loaded)") : joined(known));
}

const Family& require_family(const FamilyRegistry& families, const std::string& name,
                             HttpStatus status) {
  if (const Family* family = families.find(name)) return *family;
  throw ApiError(status, "unknown_family", unknown_family_message(families, name));
}

void require_dtype(const Family& family, const std::string& dtype) {
  if (std::find(family.dtypes.begin(), family.dtypes.end(), dtype) != family.dtypes.end()) return;
  throw ApiError(HttpStatus::unprocessable_entity, "unknown_dtype",
                 "family " + family.name + " has no dtype " + quote_client_text(dtype) +
                     did_you_mean(dtype, family.dtypes) +
                     "; it supports: " + joined(family.dtypes));
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
    // No dim has a long name; refusing one here keeps it out of the tuner's messages.
    if (name.size() > kMaxNameChars)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_shape",
                     "unknown dimension " + quote_client_text(name));
    const std::string field = field_path("shape", name);
    // Numbers past the exact range, however written (2^63 read as unsigned, 1e30 as a float),
    // are named as such before the type check, which would only say "an integer".
    if ((value.is_number_unsigned() &&
         value.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxExactInteger)) ||
        (value.is_number_float() &&
         std::fabs(value.get<double>()) > static_cast<double>(kMaxExactInteger)))
      throw outside_exact_range(field, value.dump());
    if (!value.is_number_integer())
      throw ApiError(HttpStatus::bad_request, "invalid_field",
                     field + " must be an integer, got " + describe_client_value(value));
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
                     "dimension " + dim + " must be an integer, got " + quote_client_text(text));
    add_dim(family, result, name, value);
  }
  result = with_default_dims(family, std::move(result));
  check_shape(family, result, dtype);
  return result;
}

bool optional_flag(const nlohmann::json& body, const std::string& name, bool fallback) {
  if (!body.contains(name) || body.at(name).is_null()) return fallback;
  if (!body.at(name).is_boolean())
    throw ApiError(
        HttpStatus::bad_request, "invalid_field",
        "field '" + name + "' must be true or false, got " + describe_client_value(body.at(name)));
  return body.at(name).get<bool>();
}

void reject_unknown_params(const ApiRequest& request, const std::set<std::string>& allowed) {
  for (const auto& [name, value] : request.query)
    if (!allowed.count(name))
      throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                     "unknown query parameter " + quote_client_text(name));
}

}  // namespace kt
