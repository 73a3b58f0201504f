// The --shape argument of the CLI: "m=4096,n=4096,k=4096", dim names matched to the family's
// names case-insensitively.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kt {

// "m=4096,n=4096,k=4096" -> {m:4096,n:4096,k:4096}; throws std::invalid_argument naming the bad
// item (missing '=', empty name, non-integer or repeated dim).
std::map<std::string, std::int64_t> parse_shape_arg(const std::string& text);

// Renames dims to the family's spelling (from a GET /v1/families entry: {"dims":[{"name":..}]}).
// Names the family does not have are kept, so the server reports them.
std::map<std::string, std::int64_t> match_family_dims(
    const std::map<std::string, std::int64_t>& shape, const nlohmann::json& family);

}  // namespace kt
