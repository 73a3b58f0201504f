#include "tuner/space_index.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "tuner/variant_space.hpp"

namespace kt {
namespace {

bool names_a_dim(const Expression& e, const std::set<std::string>& dims) {
  const std::vector<std::string> vars = e.variables();
  return std::any_of(vars.begin(), vars.end(), [&](const std::string& v) { return dims.count(v); });
}

// Every constraint holds (one that cannot be evaluated counts as failing, as in the plan).
bool holds(const std::vector<const Expression*>& constraints, const Bindings& bindings) {
  for (const Expression* c : constraints) {
    try {
      if (c->evaluate(bindings) == 0) return false;
    } catch (const ExpressionError&) {
      return false;
    }
  }
  return true;
}

}  // namespace

SpaceIndex::SpaceIndex(const Family& family, std::string dtype, DeviceLimits limits)
    : family_(family), dtype_(std::move(dtype)), limits_(std::move(limits)) {
  std::set<std::string> dims;
  Shape any_shape;  // the dim-free constraints do not read it
  for (const DimSpec& d : family.dims) {
    dims.insert(d.name);
    any_shape[d.name] = d.min;
  }
  for (const TemplateSpec& tmpl : family.templates) {
    if (std::find(tmpl.archs.begin(), tmpl.archs.end(), limits_.arch) == tmpl.archs.end()) continue;
    Part part;
    part.tmpl = &tmpl;
    std::vector<const AxisSpec*> axes;
    bool empty = false;
    for (const AxisSpec& axis : tmpl.axes) {
      if (!axis.archs.empty() &&
          std::find(axis.archs.begin(), axis.archs.end(), limits_.arch) == axis.archs.end())
        continue;
      if (axis.values.empty()) empty = true;
      axes.push_back(&axis);
      part.axes.push_back(axis.name);
    }
    if (empty) continue;
    std::vector<const Expression*> dim_free, shaped;
    for (const std::string& text : tmpl.constraints) {
      const Expression& e = shared_expression(text);
      (names_a_dim(e, dims) ? shaped : dim_free).push_back(&e);
    }
    Config config;
    for (const AxisSpec* axis : axes) config[axis->name] = axis->values[0];
    Bindings bindings = make_bindings(any_shape, config, dtype_, limits_);
    std::vector<double*> slots;
    for (const AxisSpec* axis : axes) slots.push_back(&bindings[axis->name]);
    std::vector<std::size_t> index(axes.size(), 0);
    std::vector<std::int64_t> values(axes.size());
    for (;;) {
      for (std::size_t a = 0; a < axes.size(); ++a) {
        values[a] = axes[a]->values[index[a]];
        *slots[a] = static_cast<double>(values[a]);
      }
      ++enumerated_;
      if (holds(dim_free, bindings)) part.configs.push_back(values);
      std::size_t a = axes.size();
      while (a > 0 && ++index[a - 1] == axes[a - 1]->values.size()) index[--a] = 0;
      if (a == 0) break;
    }
    for (const Expression* e : shaped) part.shape_constraints.push_back(factor_of(*e, part));
    // A shape's walk tries the constraints with the fewest combinations first (feasible_rows).
    std::stable_sort(
        part.shape_constraints.begin(), part.shape_constraints.end(),
        [](const Factor& a, const Factor& b) { return a.combos.size() < b.combos.size(); });
    const LaunchSpec& launch = tmpl.launch;
    for (const auto* texts : {&launch.grid, &launch.block, &launch.cluster})
      for (const std::string& text : *texts)
        part.launch.push_back(factor_of(shared_expression(text), part));
    part.launch.push_back(factor_of(shared_expression(launch.dynamic_smem), part));
    parts_.push_back(std::move(part));
  }
}

SpaceIndex::Factor SpaceIndex::factor_of(const Expression& expression, const Part& part) {
  Factor f;
  f.expression = &expression;
  const std::vector<std::string> vars = expression.variables();
  for (std::size_t a = 0; a < part.axes.size(); ++a)
    if (std::find(vars.begin(), vars.end(), part.axes[a]) != vars.end()) f.axes.push_back(a);
  std::map<std::vector<std::int64_t>, std::uint32_t> ids;
  std::vector<std::int64_t> combo(f.axes.size());
  f.combo_of.reserve(part.configs.size());
  for (const std::vector<std::int64_t>& values : part.configs) {
    for (std::size_t i = 0; i < f.axes.size(); ++i) combo[i] = values[f.axes[i]];
    const auto [at, added] = ids.emplace(combo, static_cast<std::uint32_t>(f.combos.size()));
    if (added) f.combos.push_back(combo);
    f.combo_of.push_back(at->second);
  }
  return f;
}

std::size_t SpaceIndex::kept() const {
  std::size_t n = 0;
  for (const Part& p : parts_) n += p.configs.size();
  return n;
}

namespace {

// A factor's values on one shape's bindings (`slots`: the part's axes in the map), each
// combination of its axes evaluated the first time a row needs it: most of a part's rows fail an
// early constraint, so the combinations only they use are never evaluated (nor their launch).
template <typename Factor>
class LazyFactor {
 public:
  LazyFactor(const Factor& f, const Bindings& bindings, const std::vector<double*>& slots)
      : f_(&f), slots_(&slots), state_(f.combos.size(), kUnknown), values_(f.combos.size()) {
    try {
      bound_.emplace(*f.expression, bindings);
    } catch (const ExpressionError&) {  // every combination fails, as each evaluation would
    }
  }
  // The value for the combination `row` has; nullopt where it throws (or reads a name the map
  // lacks).
  std::optional<double> value(std::size_t row) {
    const std::uint32_t c = f_->combo_of[row];
    if (state_[c] == kUnknown) {
      state_[c] = kFailed;
      if (bound_) {
        for (std::size_t i = 0; i < f_->axes.size(); ++i)
          *(*slots_)[f_->axes[i]] = static_cast<double>(f_->combos[c][i]);
        try {
          values_[c] = bound_->evaluate();
          state_[c] = kKnown;
        } catch (const ExpressionError&) {
        }
      }
    }
    return state_[c] == kKnown ? std::optional<double>(values_[c]) : std::nullopt;
  }

 private:
  enum : char { kUnknown, kKnown, kFailed };
  const Factor* f_;
  const std::vector<double*>* slots_;
  std::optional<BoundExpression> bound_;
  std::vector<char> state_;
  std::vector<double> values_;
};

// evaluate_launch's integer check and range for one formula's value.
std::optional<std::uint32_t> launch_value(const std::optional<double>& value, long long min) {
  if (!value) return std::nullopt;
  const double rounded = std::round(*value);
  if (std::fabs(*value - rounded) > 1e-9 * std::max(1.0, std::fabs(*value))) return std::nullopt;
  if (rounded < static_cast<double>(min) ||
      rounded > static_cast<double>(std::numeric_limits<std::uint32_t>::max()))
    return std::nullopt;
  return static_cast<std::uint32_t>(rounded);
}

}  // namespace

std::vector<SpaceIndex::Row> SpaceIndex::feasible_rows(const Shape& shape, bool with_launch) const {
  std::vector<Row> out;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const Part& part = parts_[p];
    if (part.configs.empty()) continue;
    Config config;
    for (std::size_t a = 0; a < part.axes.size(); ++a) config[part.axes[a]] = part.configs[0][a];
    Bindings bindings = make_bindings(shape, config, dtype_, limits_);
    std::vector<double*> slots;
    for (const std::string& axis : part.axes) slots.push_back(&bindings[axis]);
    // Each constraint at most once per combination of its axes, in the part's order (the fewest
    // combinations first): holds (non-zero) or not (0, or throws).
    std::vector<LazyFactor<Factor>> constraints;
    constraints.reserve(part.shape_constraints.size());
    for (const Factor& f : part.shape_constraints) constraints.emplace_back(f, bindings, slots);
    // The launch formulas the same way, only for rows every constraint admits, checked as
    // evaluate_launch checks them.
    std::vector<LazyFactor<Factor>> launch;
    if (with_launch) launch.reserve(part.launch.size());
    if (with_launch)
      for (const Factor& f : part.launch) launch.emplace_back(f, bindings, slots);
    for (std::size_t row = 0; row < part.configs.size(); ++row) {
      bool ok = true;
      for (std::size_t k = 0; k < constraints.size() && ok; ++k) {
        const std::optional<double> v = constraints[k].value(row);
        ok = v && *v != 0;
      }
      if (!ok) continue;
      Row& r = out.emplace_back();
      r.part = static_cast<std::uint32_t>(p);
      r.row = static_cast<std::uint32_t>(row);
      if (with_launch) {
        LaunchDims dims;
        std::array<std::uint32_t, 3>* extents[] = {&dims.grid, &dims.block, &dims.cluster};
        bool launches = true;
        for (std::size_t i = 0; i < launch.size() && launches; ++i) {
          const std::optional<std::uint32_t> v = launch_value(launch[i].value(row), i < 9 ? 1 : 0);
          if (!v)
            launches = false;
          else if (i < 9)
            (*extents[i / 3])[i % 3] = *v;
          else
            dims.dynamic_smem = *v;
        }
        if (launches) r.launch = dims;
      }
    }
  }
  return out;
}

SpaceIndex::Entry SpaceIndex::entry(const Row& row) const {
  const Part& part = parts_[row.part];
  const std::vector<std::int64_t>& values = part.configs[row.row];
  Entry e;
  e.tmpl = part.tmpl;
  for (std::size_t a = 0; a < values.size(); ++a) e.config.emplace(part.axes[a], values[a]);
  e.launch = row.launch;
  return e;
}

std::vector<SpaceIndex::Entry> SpaceIndex::feasible(const Shape& shape, bool with_launch) const {
  std::vector<Entry> out;
  for (const Row& row : feasible_rows(shape, with_launch)) out.push_back(entry(row));
  return out;
}

}  // namespace kt
