// Reads a kernel argument list of a family manifest (the family's "args", or a template's own)
// into ArgSpec values: buffers, scalars and TMA tensor maps over buffers.
#pragma once

#include <string>
#include <vector>

#include "tuner/family.hpp"
#include "tuner/manifest_reader.hpp"

namespace kt {

// `list` must be a JSON list; `where` names it in errors ("args", "templates[1].args"). Buffers
// named by an argument must already be in family.buffers. {"reference_output": true} is taken
// only where a kernel reference's arguments are read (for_reference).
std::vector<ArgSpec> parse_arg_list(ManifestReader& reader, const ManifestJson& list,
                                    const std::string& where, const Family& family,
                                    bool for_reference = false);

}  // namespace kt
