// Checks shared by the handlers: JSON bodies, ids in paths, families, dtypes and shapes (from JSON
// bodies or query strings). Each throws ApiError with the status and code the API documents
// (docs/api.md), so handlers read as the happy path. Whatever a client sends may be hostile: bodies
// are parsed with a depth limit, and messages quote only a short prefix of a client's value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_response.hpp"
#include "server/router.hpp"
#include "tuner/client_values.hpp"  // quote_client_text: every message quoting a client's value
#include "tuner/config.hpp"
#include "tuner/family.hpp"

namespace kt {

// Containers (arrays, objects) nested deeper than this in a body are refused while parsing.
inline constexpr int kMaxJsonDepth = 64;
// Names a client picks (family, dtype, arch, device, dims, axes) are never this long; longer ones
// are refused before they reach messages written elsewhere (the engine, the tuner).
inline constexpr std::size_t kMaxNameChars = 128;

// A request body as JSON. 400 invalid_json: not JSON, a NUL byte, or anything but whitespace after
// the value; 400 nesting_too_deep: containers nested deeper than kMaxJsonDepth (refused as the
// parser reaches them, so deep input never costs more than the limit); 400 invalid_field: a number
// beyond a double's range (1e99999), naming the field ("shape.m").
nlohmann::json parse_json_body(std::string_view body);

// A client's JSON value for an error message: scalars short and escaped, arrays and objects only
// by their kind and size (dumping one would recurse as deep as the client nested it).
std::string describe_client_value(const nlohmann::json& value);

// "a, b, c"
std::string joined(const std::vector<std::string>& items);

// A body's optional true/false field: `fallback` when absent or null; 400 invalid_field naming it
// when it is anything but a boolean.
bool optional_flag(const nlohmann::json& body, const std::string& name, bool fallback);
// 400 unknown_parameter for a query parameter of the request that is not in `allowed`.
void reject_unknown_params(const ApiRequest& request, const std::set<std::string>& allowed);
// A positive decimal id; 400 invalid_id otherwise.
std::int64_t parse_id(const std::string& text, const std::string& what);
// A non-negative decimal integer from a query parameter; 400 invalid_parameter otherwise.
std::int64_t parse_query_integer(const std::string& text, const std::string& name);

// unknown_family (404 by default: a query names a resource), naming the families that exist.
const Family& require_family(const FamilyRegistry& families, const std::string& name,
                             HttpStatus status = HttpStatus::not_found);
// "unknown family 'x'; known families: a, b"
std::string unknown_family_message(const FamilyRegistry& families, const std::string& name);
// 422 unknown_dtype, naming the family's dtypes.
void require_dtype(const Family& family, const std::string& dtype);

// The family's dim name matching `name` case-insensitively, or `name` unchanged if none does.
std::string canonical_dim_name(const Family& family, const std::string& name);
// {"m":4096,...} -> Shape with the family's dim names. 400 invalid_field for a value that is not
// an integer; 422 invalid_shape for duplicates, non-positive values and whatever
// kt::validate_shape rejects (missing, unknown, too large, constraint).
Shape shape_from_json(const Family& family, const nlohmann::json& shape, const std::string& dtype);
// The same from query parameters: every parameter named like one of the family's dims
// (case-insensitively) is a dim; other names are left to the caller.
Shape shape_from_query(const Family& family, const std::map<std::string, std::string>& query,
                       const std::string& dtype);

}  // namespace kt
