// Small file helpers of the benchmark programs.
#pragma once

#include <filesystem>
#include <string>

#include "tuner/text.hpp"

namespace kt::bench {

// The text-file pair every layer shares (tuner/text.hpp), under the names the programs use.
using kt::read_text_file;
using kt::write_text_file;
// The folder of the running executable (/proc/self/exe).
std::filesystem::path program_dir();

}  // namespace kt::bench
