// Configs (one point of a family's parameter space) and shapes (one problem size), both maps from
// a name to an integer, with a canonical text key used for storage and lookup.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kt {

// Axis name -> value, e.g. {"BM":128,"BN":128,"BK":32,"STAGES":3}.
using Config = std::map<std::string, std::int64_t>;
// Dimension name -> extent, e.g. {"M":4096,"N":4096,"K":4096}.
using Shape = std::map<std::string, std::int64_t>;

// "K=4096,M=4096,N=4096": names sorted (std::map order), no spaces. Equal maps give equal keys.
std::string canonical_key(const std::map<std::string, std::int64_t>& values);
// Inverse of canonical_key; throws std::invalid_argument on malformed text.
std::map<std::string, std::int64_t> parse_canonical_key(const std::string& key);

nlohmann::json to_json(const std::map<std::string, std::int64_t>& values);
// Accepts an object of integer values only; throws std::invalid_argument naming the bad field.
std::map<std::string, std::int64_t> int_map_from_json(const nlohmann::json& j);

}  // namespace kt
