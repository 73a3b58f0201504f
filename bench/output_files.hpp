// Small file helpers of the benchmark programs.
#pragma once

#include <filesystem>
#include <string>

namespace kt::bench {

// Writes text to path (creating its folders), replacing the file; throws std::runtime_error
// naming the path on failure.
void write_text_file(const std::filesystem::path& path, const std::string& text);
// The whole file; throws std::runtime_error naming the path if it cannot be read.
std::string read_text_file(const std::filesystem::path& path);
// The folder of the running executable (/proc/self/exe).
std::filesystem::path program_dir();

}  // namespace kt::bench
