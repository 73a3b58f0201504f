// Replaces the text between two marker lines of a document (a benchmark table of
// docs/benchmarks.md), leaving everything else byte for byte as it was.
#pragma once

#include <string>

namespace kt::bench {

inline constexpr const char* kGemmTableBegin = "<!-- gemm-table:begin -->";
inline constexpr const char* kGemmTableEnd = "<!-- gemm-table:end -->";

// The text with whatever lies between the end of the `begin` marker's line and the start of the
// `end` marker's line replaced by `content` (a newline is added if it lacks one). Throws
// std::invalid_argument if a marker is missing, appears twice, or the end comes first.
std::string replace_marked_section(const std::string& text, const std::string& begin,
                                   const std::string& end, const std::string& content);

}  // namespace kt::bench
