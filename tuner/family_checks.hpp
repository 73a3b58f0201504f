// Cross-field checks of a parsed family: every expression only names dims, axes present on the
// arch it is evaluated for, elem_bytes and device limits; names do not collide; the smoke shape
// is a valid shape. Problems go into the reader, located by manifest field.
#pragma once

#include "tuner/family.hpp"
#include "tuner/manifest_reader.hpp"

namespace kt {

void check_family_names(ManifestReader& reader, const Family& family);

}  // namespace kt
