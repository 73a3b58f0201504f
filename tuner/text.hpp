// Two small text rules the layers above share, so a name or a number in a request reads the same
// everywhere: ASCII lower case, and a strict decimal (digits only, no sign, fits int64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kt {

std::string ascii_lower(std::string text);
std::optional<std::int64_t> parse_decimal(const std::string& text);

}  // namespace kt
