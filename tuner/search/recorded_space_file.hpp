// Recorded spaces on disk: `kerntune export` writes one JSON file per space; the committed ones
// are gzip-compressed (.json.gz), which is read the same way (zlib's gz reader passes plain files
// through).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tuner/search/recorded_space.hpp"

namespace kt {

// Throws std::runtime_error naming the file and what is wrong with it.
RecordedSpace load_recorded_space(const std::filesystem::path& file);

// The space files named: files as given, folders for their *.json and *.json.gz (not recursing),
// sorted by path.
std::vector<std::filesystem::path> recorded_space_files(const std::vector<std::string>& args);

}  // namespace kt
