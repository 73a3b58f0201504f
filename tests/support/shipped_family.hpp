// The families as shipped (kernel_templates/<name>), each loaded once per test binary: the compile
// tests and the GPU tests build their variants from them (templates by name: variant_cover.hpp; the
// gemm family's shorthands: gemm_templates.hpp).
#pragma once

#include <string>

#include "tuner/family.hpp"

namespace kt::test {

// Throws FamilyError if the family does not load.
const Family& shipped_family(const std::string& name);
// Every shipped family in a registry of its own (what a daemon started on kernel_templates has).
FamilyRegistry shipped_families();

}  // namespace kt::test
