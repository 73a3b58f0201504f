#include "tuner/error_bound.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace kt {

double unit_roundoff(const std::string& dtype) {
  if (dtype == "bf16") return 0x1p-8;   // 8 significant bits
  if (dtype == "fp16") return 0x1p-11;  // 11
  if (dtype == "f32") return 0x1p-24;   // 24
  if (dtype == "e4m3") return 0x1p-4;   // 4
  if (dtype == "e5m2") return 0x1p-3;   // 3
  throw std::invalid_argument("no unit roundoff for dtype '" + dtype + "'");
}

double magnitude_unit_roundoff(const std::string& output_dtype, std::int64_t reduction) {
  if (reduction < 1)
    throw std::invalid_argument("a reduction length must be at least 1, not " +
                                std::to_string(reduction));
  return unit_roundoff(output_dtype) / std::sqrt(static_cast<double>(reduction)) +
         kAccumulationUnitRoundoff;
}

MagnitudeBound magnitude_bound(const Tolerance& tolerance, const std::string& output_dtype,
                               std::int64_t reduction, std::string magnitude) {
  MagnitudeBound bound;
  bound.c = tolerance.magnitude;
  bound.u = magnitude_unit_roundoff(output_dtype, reduction);
  bound.u_out = unit_roundoff(output_dtype);
  bound.u_acc = kAccumulationUnitRoundoff;
  bound.reduction = reduction;
  bound.magnitude = std::move(magnitude);
  return bound;
}

}  // namespace kt
