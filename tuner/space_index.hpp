// A family's feasible configs for many shapes of one dtype and device, fast. Building the index
// enumerates each template's axes once and keeps the configs that pass the constraints naming no
// dim (tile sizes against shared memory, thread counts, ...); a shape then evaluates only the
// constraints that name a dim, on those configs. feasible(shape) is what enumerate_variants keeps
// for the shape, in the same order, without walking the whole cartesian product again (a GEMM
// space of 200k configs keeps a few thousand). The predicted answers (GET /v1/best?predict=1)
// rank a shape's feasible configs with it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tuner/config.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/expression.hpp"
#include "tuner/family.hpp"

namespace kt {

class SpaceIndex {
 public:
  struct Entry {
    const TemplateSpec* tmpl = nullptr;
    Config config;
  };

  // `family` must outlive the index. Templates not written for limits.arch hold nothing.
  SpaceIndex(const Family& family, std::string dtype, DeviceLimits limits);

  // The configs feasible for `shape`, template by template in enumeration order. A config whose
  // shape constraint cannot be evaluated for the shape is left out, as the plan prunes it.
  std::vector<Entry> feasible(const Shape& shape) const;

  const std::string& dtype() const { return dtype_; }
  const DeviceLimits& limits() const { return limits_; }
  std::size_t enumerated() const { return enumerated_; }  // configs of the product, every template
  std::size_t kept() const;  // configs that passed the dim-free constraints

 private:
  struct Part {
    const TemplateSpec* tmpl = nullptr;
    std::vector<std::string> axes;                     // that apply to the arch, in manifest order
    std::vector<std::vector<std::int64_t>> configs;    // their values, one row per kept config
    std::vector<const Expression*> shape_constraints;  // the constraints naming a dim
  };

  const Family& family_;
  std::string dtype_;
  DeviceLimits limits_;
  std::vector<Part> parts_;
  std::size_t enumerated_ = 0;
};

}  // namespace kt
