// Reads a family manifest's "reference" (what a variant's output is checked against) and
// "baseline" (what its speedup is measured against) into Family::reference and Family::baseline.
#pragma once

#include "tuner/family.hpp"
#include "tuner/manifest_reader.hpp"

namespace kt {

// Needs family.buffers and family.dir already read.
void parse_reference(ManifestReader& reader, const ManifestJson& root, Family& family);
void parse_baseline(ManifestReader& reader, const ManifestJson& root, Family& family);

}  // namespace kt
