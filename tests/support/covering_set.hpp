// Picking few variants that still exercise every value of every axis: for compile tests that must
// stay within a CPU budget.
#pragma once

#include <vector>

#include "tuner/variant_space.hpp"

namespace kt::test {

// Greedy cover: repeatedly takes the plan that adds the most unseen (axis, value) pairs, until
// every pair that occurs in `plans` is covered. Deterministic for a given order of `plans`.
std::vector<VariantPlan> covering_set(const std::vector<VariantPlan>& plans);

}  // namespace kt::test
