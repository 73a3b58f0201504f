// Number formatting for the benchmark tables.
#pragma once

#include <optional>
#include <string>

namespace kt::bench {

// Fixed-point with the given decimals: format_fixed(1.2345, 2) == "1.23".
std::string format_fixed(double value, int decimals);
// "12.3 µs"; "—" when unknown.
std::string format_us(const std::optional<double>& us);
// 0.756 -> "75.6%", 0.75 -> "75%" (one decimal, trailing ".0" dropped).
std::string format_percent(double fraction);

}  // namespace kt::bench
