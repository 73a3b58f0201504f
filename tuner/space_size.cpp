#include "tuner/space_size.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <vector>

namespace kt {
namespace {

// 1234567 -> "1,234,567".
std::string with_commas(std::uint64_t value) {
  std::string digits = std::to_string(value);
  for (std::ptrdiff_t at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return digits;
}

// The product of the counts in decimal, exactly, however large (least significant digit first).
std::vector<int> decimal_product(const TemplateSpec& tmpl) {
  std::vector<int> digits{1};
  for (const AxisSpec& axis : tmpl.axes) {
    std::uint64_t carry = 0;
    for (int& digit : digits) {
      const std::uint64_t value = static_cast<std::uint64_t>(digit) * axis.values.size() + carry;
      digit = static_cast<int>(value % 10);
      carry = value / 10;
    }
    for (; carry > 0; carry /= 10) digits.push_back(static_cast<int>(carry % 10));
    while (digits.size() > 1 && digits.back() == 0) digits.pop_back();
  }
  return digits;
}

// "10^20", "3.2 x 10^21", or the number itself with commas when it has at most 15 digits.
std::string product_text(const TemplateSpec& tmpl) {
  if (const auto exact = template_space_size(tmpl); exact && *exact < 1'000'000'000'000'000ull)
    return with_commas(*exact);
  const std::vector<int> digits = decimal_product(tmpl);
  const std::size_t exponent = digits.size() - 1;
  const bool power_of_ten =
      std::all_of(digits.begin(), digits.end() - 1, [](int d) { return d == 0; }) &&
      digits.back() == 1;
  if (power_of_ten) return "10^" + std::to_string(exponent);
  std::string mantissa = std::to_string(digits.back()) + "." + std::to_string(digits[exponent - 1]);
  return "about " + mantissa + " x 10^" + std::to_string(exponent);
}

// The value counts as factors, largest first, repeats as powers: "100^10", "64^3 x 5 x 2".
std::string factors_text(const TemplateSpec& tmpl) {
  std::map<std::size_t, int, std::greater<>> counts;
  for (const AxisSpec& axis : tmpl.axes) ++counts[axis.values.size()];
  std::string text;
  for (const auto& [count, times] : counts) {
    if (!text.empty()) text += " x ";
    text += std::to_string(count) + (times > 1 ? "^" + std::to_string(times) : "");
  }
  return text;
}

}  // namespace

std::optional<std::uint64_t> template_space_size(const TemplateSpec& tmpl) {
  std::uint64_t product = 1;
  for (const AxisSpec& axis : tmpl.axes) {
    const std::uint64_t count = axis.values.size();
    if (count != 0 && product > std::numeric_limits<std::uint64_t>::max() / count)
      return std::nullopt;
    product *= count;
  }
  return product;
}

std::int64_t saturated_space_size(const TemplateSpec& tmpl) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const auto product = template_space_size(tmpl);
  return static_cast<std::int64_t>(product ? std::min(*product, kMax) : kMax);
}

std::optional<std::string> space_too_large(const TemplateSpec& tmpl) {
  const auto product = template_space_size(tmpl);
  if (product && *product <= kMaxTemplateConfigs) return std::nullopt;
  return "template '" + tmpl.name + "' has " + product_text(tmpl) + " configs (" +
         factors_text(tmpl) + "); at most " + with_commas(kMaxTemplateConfigs) + " per template";
}

}  // namespace kt
