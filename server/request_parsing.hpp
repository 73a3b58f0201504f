// Checks shared by the handlers: ids in paths, families, dtypes and shapes (from JSON bodies or
// query strings). Each throws ApiError with the status and code the API documents (docs/api.md),
// so handlers read as the happy path.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_response.hpp"
#include "tuner/config.hpp"
#include "tuner/family.hpp"

namespace kt {

// A positive decimal id; 400 invalid_id otherwise.
std::int64_t parse_id(const std::string& text, const std::string& what);
// A non-negative decimal integer from a query parameter; 400 invalid_parameter otherwise.
std::int64_t parse_query_integer(const std::string& text, const std::string& name);

// 404 unknown_family, naming the families that exist.
const Family& require_family(const FamilyRegistry& families, const std::string& name);
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
