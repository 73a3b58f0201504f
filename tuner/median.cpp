#include "tuner/median.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace kt {

double median(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty set");
  std::vector<double> sorted(values.begin(), values.end());
  const std::size_t mid = sorted.size() / 2;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid), sorted.end());
  const double upper = sorted[mid];
  if (sorted.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace kt
