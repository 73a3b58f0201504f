#include "bench/text_format.hpp"

#include <cstdio>

namespace kt::bench {

std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string format_us(const std::optional<double>& us) {
  return us ? format_fixed(*us, 1) + " µs" : "—";
}

std::string format_percent(double fraction) {
  std::string text = format_fixed(fraction * 100, 1);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text + "%";
}

}  // namespace kt::bench
