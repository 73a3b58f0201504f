// A family's feasible configs for many shapes of one dtype and device, fast. Building the index
// enumerates each template's axes once and keeps the configs that pass the constraints naming no
// dim (tile sizes against shared memory, thread counts, ...); a shape then evaluates only the
// constraints that name a dim, on those configs. feasible(shape) is what enumerate_variants keeps
// for the shape, in the same order, without walking the whole cartesian product again (a GEMM
// space of 200k configs keeps a few thousand). The predicted answers (GET /v1/best?predict=1)
// rank a shape's feasible configs with it.
//
// A constraint or launch formula reads only a few of a template's axes (cdiv(M,BM) reads BM), so
// for a shape it is evaluated at most once per distinct combination of those axes' values among
// the kept configs, not once per config: the index keeps, per expression, each config's
// combination, and a shape's walk is then table lookups (a few thousand evaluations for a GEMM
// space of 200k configs, where the plan makes millions). A combination is evaluated when a config
// first needs it: the constraints with the fewest combinations first, the launch formulas only for
// configs every constraint admits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/config.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/expression.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

class SpaceIndex {
 public:
  struct Entry {
    const TemplateSpec* tmpl = nullptr;
    Config config;
    // With feasible(shape, true): the launch for the shape, as evaluate_launch gives it; nullopt
    // where one of its formulas does not evaluate or falls outside the driver's range.
    std::optional<LaunchDims> launch;
  };

  // A feasible config by position, without its Config: its template's part and row of the index,
  // and the launch as in Entry. The shape predictor ranks thousands per answer by their values.
  struct Row {
    std::uint32_t part = 0;
    std::uint32_t row = 0;
    std::optional<LaunchDims> launch;
  };

  // `family` must outlive the index. Templates not written for limits.arch hold nothing.
  SpaceIndex(const Family& family, std::string dtype, DeviceLimits limits);

  // The configs feasible for `shape`, template by template in enumeration order. A config whose
  // shape constraint cannot be evaluated for the shape is left out, as the plan prunes it.
  std::vector<Entry> feasible(const Shape& shape, bool with_launch = false) const;

  // What feasible() gives, in the same order, as rows; entry() makes one an Entry.
  std::vector<Row> feasible_rows(const Shape& shape, bool with_launch = false) const;
  const TemplateSpec& template_of(const Row& row) const { return *parts_[row.part].tmpl; }
  // The row's axes (those of its template that apply to the arch, in manifest order) and values.
  const std::vector<std::string>& axes_of(const Row& row) const { return parts_[row.part].axes; }
  const std::vector<std::int64_t>& row_values(const Row& row) const {
    return parts_[row.part].configs[row.row];
  }
  Entry entry(const Row& row) const;

  const std::string& dtype() const { return dtype_; }
  const DeviceLimits& limits() const { return limits_; }
  std::size_t enumerated() const { return enumerated_; }  // configs of the product, every template
  std::size_t kept() const;  // configs that passed the dim-free constraints

 private:
  // One expression of a template over the kept configs: the axes it reads, their distinct
  // value combinations, and each kept config's combination.
  struct Factor {
    const Expression* expression = nullptr;
    std::vector<std::size_t> axes;                  // positions in Part::axes it reads
    std::vector<std::vector<std::int64_t>> combos;  // distinct values of those axes
    std::vector<std::uint32_t> combo_of;            // per kept config: its combination
  };
  struct Part {
    const TemplateSpec* tmpl = nullptr;
    std::vector<std::string> axes;                   // that apply to the arch, in manifest order
    std::vector<std::vector<std::int64_t>> configs;  // their values, one row per kept config
    // The constraints naming a dim, those with the fewest combinations first.
    std::vector<Factor> shape_constraints;
    std::vector<Factor> launch;  // grid[3], block[3], cluster[3], dynamic_smem: in that order
  };
  static Factor factor_of(const Expression& expression, const Part& part);

  const Family& family_;
  std::string dtype_;
  DeviceLimits limits_;
  std::vector<Part> parts_;
  std::size_t enumerated_ = 0;
};

}  // namespace kt
