#include "tuner/space_index.hpp"

#include <algorithm>
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
    std::vector<const Expression*> dim_free;
    for (const std::string& text : tmpl.constraints) {
      const Expression& e = shared_expression(text);
      (names_a_dim(e, dims) ? part.shape_constraints : dim_free).push_back(&e);
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
    parts_.push_back(std::move(part));
  }
}

std::size_t SpaceIndex::kept() const {
  std::size_t n = 0;
  for (const Part& p : parts_) n += p.configs.size();
  return n;
}

std::vector<SpaceIndex::Entry> SpaceIndex::feasible(const Shape& shape) const {
  std::vector<Entry> out;
  for (const Part& part : parts_) {
    Config config;
    for (std::size_t a = 0; a < part.axes.size(); ++a)
      config[part.axes[a]] = part.configs.empty() ? 0 : part.configs[0][a];
    Bindings bindings = make_bindings(shape, config, dtype_, limits_);
    std::vector<double*> slots;
    for (const std::string& axis : part.axes) slots.push_back(&bindings[axis]);
    for (const std::vector<std::int64_t>& values : part.configs) {
      for (std::size_t a = 0; a < values.size(); ++a) *slots[a] = static_cast<double>(values[a]);
      if (!holds(part.shape_constraints, bindings)) continue;
      Entry e;
      e.tmpl = part.tmpl;
      for (std::size_t a = 0; a < values.size(); ++a) e.config[part.axes[a]] = values[a];
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace kt
