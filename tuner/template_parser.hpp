// Reads the "templates" list of a family manifest (name, source, kernel, archs, axes in manifest
// order, constraints, launch, options) into Family::templates.
#pragma once

#include "tuner/family.hpp"
#include "tuner/manifest_reader.hpp"

namespace kt {

void parse_templates(ManifestReader& reader, const ManifestJson& root, Family& family);

// A "launch" object: grid and block (3 expressions each), optional cluster and dynamic_smem.
void parse_launch(ManifestReader& reader, const ManifestJson& spec, const std::string& where,
                  LaunchSpec& launch);

}  // namespace kt
