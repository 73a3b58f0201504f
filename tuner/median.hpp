// The median of a set of numbers: the middle value, or the mean of the two middle values of an
// even count. One definition for the worker's timing statistics, the benchmark programs and their
// reports.
#pragma once

#include <span>

namespace kt {

// Throws std::invalid_argument on an empty set.
double median(std::span<const double> values);

}  // namespace kt
