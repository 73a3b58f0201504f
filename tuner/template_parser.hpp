// Reads the "templates" list of a family manifest (name, source, kernel, archs, axes in manifest
// order, constraints, launch, options) into Family::templates.
#pragma once

#include "tuner/family.hpp"
#include "tuner/manifest_reader.hpp"

namespace kt {

void parse_templates(ManifestReader& reader, const ManifestJson& root, Family& family);

}  // namespace kt
