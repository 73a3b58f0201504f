// Bounds on values someone else wrote (a request's field, an uploaded manifest's name, number or
// constraint), shared by every layer that checks them, the server's and the manifest loader's: how
// much of one an error message quotes (so a 400 KB value never comes back as a 400 KB answer), and
// the integers that are taken exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kt {

// How much of a client's value an error message quotes.
inline constexpr std::size_t kQuotedPrefixChars = 40;

// 2^53: shapes and manifest numbers meet expressions, which evaluate in doubles; above this an
// integer is not held exactly (2^53 + 1 reads as 2^53), so such values are refused, not rounded.
inline constexpr std::int64_t kMaxExactInteger = std::int64_t{1} << 53;
inline constexpr const char* kExactIntegerRange = "|x| <= 2^53";

// At most kQuotedPrefixChars of the text (never half a UTF-8 character), JSON-escaped, in single
// quotes, followed by "... (N bytes)" when cut. Never the whole value.
std::string quote_client_text(std::string_view text);

}  // namespace kt
