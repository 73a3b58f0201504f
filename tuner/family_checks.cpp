#include "tuner/family_checks.hpp"

#include <algorithm>
#include <set>

#include "tuner/client_values.hpp"
#include "tuner/expression.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

// One expression of the manifest and where it was written.
struct Located {
  std::string where;
  std::string text;
};

// elem_bytes and the device limits: the names every template expression may use besides dims
// and axes. Taken from make_bindings so the two cannot drift apart.
std::set<std::string> reserved_names() {
  std::set<std::string> names;
  for (const auto& [name, unused] : make_bindings({}, {}, "bf16", DeviceLimits{}))
    names.insert(name);
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The archs whose set of present axes differs: the template's archs, or, for a template that
// runs anywhere, every arch an axis is restricted to plus "" for any other arch.
std::vector<std::string> arch_scenarios(const TemplateSpec& tmpl) {
  if (!tmpl.archs.empty()) return tmpl.archs;
  std::vector<std::string> archs{""};
  for (const AxisSpec& axis : tmpl.axes)
    for (const std::string& arch : axis.archs)
      if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  return archs;
}

bool axis_present(const AxisSpec& axis, const std::string& arch) {
  return axis.archs.empty() ||
         std::find(axis.archs.begin(), axis.archs.end(), arch) != axis.archs.end();
}

// Expressions evaluated per variant (instantiate, enumerate_variants) for this template.
std::vector<Located> template_expressions(const Family& family, const TemplateSpec& tmpl,
                                          const std::string& tmpl_where) {
  std::vector<Located> out;
  for (std::size_t i = 0; i < family.buffers.size(); ++i)
    out.push_back({field_path(field_path("buffers", i), "elements"), family.buffers[i].elements});
  const std::vector<ArgSpec>& args = kernel_args(family, tmpl);
  const std::string args_where = tmpl.args.empty() ? "args" : field_path(tmpl_where, "args");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& arg = args[i];
    const std::string where = field_path(args_where, i);
    switch (arg.kind) {
      case ArgSpec::Kind::buffer:
      case ArgSpec::Kind::reference_output:
        break;
      case ArgSpec::Kind::tensor_map:
        for (std::size_t d = 0; d < arg.dims.size(); ++d) {
          out.push_back({field_path(field_path(where, "dims"), d), arg.dims[d]});
          out.push_back({field_path(field_path(where, "box"), d), arg.box[d]});
        }
        out.push_back({field_path(where, "swizzle"), arg.swizzle});
        break;
      default: {
        const char* kind = arg.kind == ArgSpec::Kind::i32   ? "i32"
                           : arg.kind == ArgSpec::Kind::i64 ? "i64"
                                                            : "f32";
        out.push_back({field_path(where, kind), arg.value});
      }
    }
  }
  for (std::size_t i = 0; i < tmpl.constraints.size(); ++i)
    out.push_back({field_path(field_path(tmpl_where, "constraints"), i), tmpl.constraints[i]});
  for (const auto& [name, text] : tmpl.resources)
    out.push_back({field_path(field_path(tmpl_where, "resources"), name), text});
  const std::string launch = field_path(tmpl_where, "launch");
  for (std::size_t i = 0; i < 3; ++i) {
    out.push_back({field_path(field_path(launch, "grid"), i), tmpl.launch.grid[i]});
    out.push_back({field_path(field_path(launch, "block"), i), tmpl.launch.block[i]});
    out.push_back({field_path(field_path(launch, "cluster"), i), tmpl.launch.cluster[i]});
  }
  out.push_back({field_path(launch, "dynamic_smem"), tmpl.launch.dynamic_smem});
  return out;
}

class NameChecker {
 public:
  NameChecker(ManifestReader& reader, const Family& family)
      : reader_(reader), family_(family), reserved_(reserved_names()) {
    for (const DimSpec& dim : family.dims) dims_.insert(dim.name);
  }

  void check_collisions() {
    for (const DimSpec& dim : family_.dims)
      if (reserved_.count(dim.name))
        reader_.error(field_path("dims", dim.name),
                      quote_client_text(dim.name) + " is a reserved name");
    for (std::size_t i = 0; i < family_.buffers.size(); ++i) {
      const std::string& name = family_.buffers[i].name;
      if (dims_.count(name) || reserved_.count(name))
        reader_.error(field_path(field_path("buffers", i), "name"),
                      quote_client_text(name) + " is already a dim or a reserved name");
    }
    for (std::size_t t = 0; t < family_.templates.size(); ++t)
      for (const AxisSpec& axis : family_.templates[t].axes) {
        const bool is_buffer =
            std::any_of(family_.buffers.begin(), family_.buffers.end(),
                        [&](const BufferSpec& b) { return b.name == axis.name; });
        if (dims_.count(axis.name) || reserved_.count(axis.name) || is_buffer)
          reader_.error(
              field_path(field_path(field_path("templates", t), "axes"), axis.name),
              quote_client_text(axis.name) + " is already a dim, a buffer or a reserved name");
      }
  }

  // Shape-level expressions see the dims and elem_bytes only.
  void check_shape_expressions() {
    std::set<std::string> allowed = dims_;
    allowed.insert("elem_bytes");
    for (std::size_t i = 0; i < family_.shape_constraints.size(); ++i)
      check({field_path("shape_constraints", i), family_.shape_constraints[i]}, allowed,
            "a dim or elem_bytes");
    check({"flops", family_.flops}, allowed, "a dim or elem_bytes");
    check({"bytes", family_.bytes}, allowed, "a dim or elem_bytes");
  }

  void check_template(std::size_t index) {
    const TemplateSpec& tmpl = family_.templates[index];
    const std::string where = field_path("templates", index);
    const std::vector<Located> expressions = template_expressions(family_, tmpl, where);
    for (const std::string& arch : arch_scenarios(tmpl)) {
      std::set<std::string> allowed = dims_;
      allowed.insert(reserved_.begin(), reserved_.end());
      for (const AxisSpec& axis : tmpl.axes)
        if (axis_present(axis, arch)) allowed.insert(axis.name);
      const std::string on = arch.empty() ? "on archs no axis is restricted to" : "on " + arch;
      for (const Located& expression : expressions)
        check(expression, allowed,
              "a dim, a device limit or an axis of template " + quote_client_text(tmpl.name) + " " +
                  on);
    }
  }

  // A kernel reference and an in-process baseline run once per job: dims, elem_bytes and the
  // device limits, no axes.
  void check_reference_and_baseline() {
    std::set<std::string> allowed = dims_;
    allowed.insert(reserved_.begin(), reserved_.end());
    const std::string expected = "a dim, elem_bytes or a device limit";
    const ReferenceSpec& ref = family_.reference;
    for (std::size_t i = 0; i < ref.args.size(); ++i)
      if (ref.args[i].kind != ArgSpec::Kind::buffer &&
          ref.args[i].kind != ArgSpec::Kind::reference_output)
        check({field_path(field_path("reference", "args"), i), ref.args[i].value}, allowed,
              expected);
    if (ref.kind == "kernel") {
      const std::string launch = field_path("reference", "launch");
      for (std::size_t i = 0; i < 3; ++i) {
        check({field_path(field_path(launch, "grid"), i), ref.launch.grid[i]}, allowed, expected);
        check({field_path(field_path(launch, "block"), i), ref.launch.block[i]}, allowed, expected);
      }
      check({field_path(launch, "dynamic_smem"), ref.launch.dynamic_smem}, allowed, expected);
      if (ref.magnitude)
        check({field_path(field_path("reference", "magnitude"), "reduction"),
               ref.magnitude->reduction},
              allowed, expected);
    }
    const auto check_params = [&](const nlohmann::json& params, const std::string& where) {
      for (const auto& [key, value] : params.items())
        if (value.is_string() && !is_buffer(value.get<std::string>()))
          check({field_path(where, key), value.get<std::string>()}, allowed, expected);
    };
    check_params(ref.params, "reference");
    if (family_.baseline) check_params(family_.baseline->params, "baseline");
  }

  // Smoke-shape entries are expressions over the job's dims; a smoke shape of plain numbers must
  // itself be a valid shape.
  void check_smoke_shape() {
    if (family_.smoke_shape.empty()) return;
    bool plain = true;
    for (const auto& [name, text] : family_.smoke_shape) {
      if (!dims_.count(name)) {
        reader_.error(field_path("smoke_shape", name), quote_client_text(name) + " is not a dim");
        return;
      }
      check({field_path("smoke_shape", name), text}, dims_, "a dim of the job's shape");
      plain = plain && shared_expression(text).variables().empty();
    }
    if (!plain || !reader_.ok()) return;
    for (const std::string& dtype : family_.dtypes)
      if (auto problem = validate_shape(family_, smoke_shape_for(family_, {}), dtype)) {
        reader_.error("smoke_shape", *problem);
        return;
      }
  }

 private:
  bool is_buffer(const std::string& name) const {
    return std::any_of(family_.buffers.begin(), family_.buffers.end(),
                       [&](const BufferSpec& b) { return b.name == name; });
  }

  static constexpr std::size_t kNamedUnknowns = 5;

  void check(const Located& expression, const std::set<std::string>& allowed,
             const std::string& expected) {
    std::vector<std::string> unknown;
    std::size_t unnamed = 0;  // past the few a message names: an expression can hold thousands
    for (const std::string& name : shared_expression(expression.text).variables())
      if (allowed.count(name) == 0 && unknown.size() < kNamedUnknowns)
        unknown.push_back(quote_client_text(name));
      else if (allowed.count(name) == 0)
        ++unnamed;
    if (unknown.empty()) return;
    if (unnamed > 0) unknown.push_back("and " + std::to_string(unnamed) + " more");
    std::string message =
        quote_client_text(expression.text) + " uses " + join(unknown) + ", not " + expected;
    if (reported_.insert(expression.where + message).second)
      reader_.error(expression.where, message);
  }

  ManifestReader& reader_;
  const Family& family_;
  std::set<std::string> reserved_;
  std::set<std::string> dims_;
  std::set<std::string> reported_;  // family-level expressions are checked once per template
};

}  // namespace

void check_family_names(ManifestReader& reader, const Family& family) {
  NameChecker checker(reader, family);
  checker.check_collisions();
  checker.check_shape_expressions();
  for (std::size_t t = 0; t < family.templates.size(); ++t) checker.check_template(t);
  checker.check_reference_and_baseline();
  checker.check_smoke_shape();
}

}  // namespace kt
