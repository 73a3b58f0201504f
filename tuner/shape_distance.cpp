#include "tuner/shape_distance.hpp"

#include <cmath>

namespace kt {

std::optional<double> shape_distance(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return std::nullopt;
  double distance = 0;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return std::nullopt;
    const std::int64_t x = ia->second, y = ib->second;
    if (x <= 0 || y <= 0) {
      if (x != y) return std::nullopt;
      continue;
    }
    distance += std::abs(std::log(static_cast<double>(x) / static_cast<double>(y)));
  }
  return distance;
}

}  // namespace kt
