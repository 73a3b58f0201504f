// How far apart two shapes of one family are, for answering a shape nobody tuned with the nearest
// tuned one and for seeding a search with its best configs: the sum over the dims of
// |log(a / b)|, so doubling any one dim costs log 2 ≈ 0.693 wherever it happens, and the distance
// is symmetric and scale-free (4096 vs 8192 is as far as 64 vs 128).
#pragma once

#include <optional>

#include "tuner/config.hpp"

namespace kt {

// nullopt when the shapes are not comparable: they name different dims, or a dim is 0 or
// negative in either (a flag such as causal) and the two differ: such dims must match exactly.
std::optional<double> shape_distance(const Shape& a, const Shape& b);

}  // namespace kt
