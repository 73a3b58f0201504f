// Small text rules the layers above share, so a name or a number in a request reads the same
// everywhere: ASCII lower case, and a strict decimal (digits only, no sign, fits int64); and whole
// text files read and written with errors that name the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kt {

std::string ascii_lower(std::string text);
std::optional<std::int64_t> parse_decimal(const std::string& text);

// The whole file, byte for byte; std::runtime_error "cannot read <path>: <reason>" when it cannot
// be opened or read (a folder included).
std::string read_text_file(const std::filesystem::path& path);
// Writes text to path, replacing the file and creating its folders; std::runtime_error
// "cannot write <path>: <reason>" on failure. Not atomic: no caller has a reader of the file
// while it is written (a family's folder is written before it is served; reports after a run).
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace kt
