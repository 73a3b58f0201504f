// The --shape argument of the CLI: "m=4096,n=4096,k=4096", dim names matched to the family's
// names case-insensitively, or "4096x4096x4096": one extent per dim of the family, in the order
// its manifest (and GET /v1/families) lists them.
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

// True for the positional form: positive integers joined by 'x' ("4096x4096x4096", "64").
bool is_positional_shape(const std::string& text);

// Either form, dims spelled as the family spells them. `family` is a GET /v1/families entry, or
// null when the server does not know the family: then a positional shape gives an empty map (the
// server refuses the unknown family before it reads the shape, naming the known ones). Throws
// std::invalid_argument: a positional shape whose count of extents is not the family's count of
// dims (the message lists the dims in order), or a bad item.
std::map<std::string, std::int64_t> shape_for_family(const std::string& text,
                                                     const nlohmann::json& family);

}  // namespace kt
