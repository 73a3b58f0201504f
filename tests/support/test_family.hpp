// A tiny synthetic kernel family for tests of manifests and variant spaces: two dims (M, N), a
// three-axis template with one arch-restricted axis, and a template only for sm_100a.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace kt::test {

// The manifest as JSON; tests mutate it to make it broken in one place.
nlohmann::ordered_json tiny_family_manifest();
// Writes manifest.json plus tiny.cuh, tiny_common.h and notes.txt (not a source) into dir.
void write_tiny_family(const std::filesystem::path& dir, const nlohmann::ordered_json& manifest);

}  // namespace kt::test
