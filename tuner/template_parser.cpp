#include "tuner/template_parser.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "tuner/arg_parser.hpp"
#include "tuner/client_values.hpp"
#include "tuner/space_size.hpp"

namespace kt {
namespace {

// "sm_90", "sm_90a", "sm_100f": what NVRTC takes as --gpu-architecture for a cubin.
bool is_arch_name(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return false;
  std::size_t digits_end = arch.size();
  if (arch.back() == 'a' || arch.back() == 'f') --digits_end;
  return digits_end > 3 && std::all_of(arch.begin() + 3, arch.begin() + digits_end, [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

AxisSpec parse_axis(ManifestReader& r, const std::string& name, const ManifestJson& spec,
                    const std::string& where, const std::vector<std::string>& template_archs) {
  AxisSpec axis;
  axis.name = name;
  if (!is_identifier(name)) r.error(where, "axis name must be an identifier");
  if (!r.expect_object(spec, where)) return axis;
  r.reject_unknown_keys(spec, {"values", "archs", "description"}, where);
  const ManifestJson* values = r.member(spec, "values", where, true);
  const bool integers = values != nullptr && values->is_array() && !values->empty() &&
                        std::all_of(values->begin(), values->end(),
                                    [](const ManifestJson& v) { return v.is_number_integer(); });
  if (values != nullptr && !integers)
    r.error(field_path(where, "values"), "must be a non-empty list of integers");
  if (integers) {
    for (std::size_t i = 0; i < values->size(); ++i)
      if (r.within_exact_range((*values)[i], field_path(field_path(where, "values"), i)))
        axis.values.push_back((*values)[i].get<std::int64_t>());
    const std::set<std::int64_t> distinct(axis.values.begin(), axis.values.end());
    if (distinct.size() != axis.values.size())
      r.error(field_path(where, "values"), "lists a value twice");
  }
  axis.archs = r.string_list(spec, "archs", where, false);
  for (const std::string& arch : axis.archs)
    if (!template_archs.empty() &&
        std::find(template_archs.begin(), template_archs.end(), arch) == template_archs.end())
      r.error(field_path(where, "archs"),
              quote_client_text(arch) + " is not one of the template's archs");
  axis.description = r.string_field(spec, "description", where, false).value_or("");
  return axis;
}

}  // namespace

void parse_launch(ManifestReader& r, const ManifestJson& spec, const std::string& where,
                  LaunchSpec& launch) {
  if (!r.expect_object(spec, where)) return;
  r.reject_unknown_keys(spec, {"grid", "block", "cluster", "dynamic_smem"}, where);
  const auto read_dims = [&](const char* key, bool required, std::array<std::string, 3>& out) {
    const ManifestJson* dims = r.member(spec, key, where, required);
    if (dims == nullptr) return;
    const std::string path = field_path(where, key);
    if (!dims->is_array() || dims->size() != 3) {
      r.error(path, "must be a list of 3 expressions (x, y, z)");
      return;
    }
    for (std::size_t i = 0; i < 3; ++i)
      if (auto text = r.expression((*dims)[i], field_path(path, i))) out[i] = *text;
  };
  read_dims("grid", true, launch.grid);
  read_dims("block", true, launch.block);
  read_dims("cluster", false, launch.cluster);
  launch.dynamic_smem = r.expression_field(spec, "dynamic_smem", where, false).value_or("0");
}

void parse_templates(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* templates = r.member(root, "templates", "", true);
  if (templates == nullptr) return;
  if (!templates->is_array() || templates->empty()) {
    r.error("templates", "must be a non-empty list");
    return;
  }
  for (std::size_t i = 0; i < templates->size(); ++i) {
    const std::string where = field_path("templates", i);
    const ManifestJson& spec = (*templates)[i];
    if (!r.expect_object(spec, where)) continue;
    r.reject_unknown_keys(spec,
                          {"name", "description", "source", "kernel", "archs", "axes",
                           "constraints", "launch", "options", "args", "resources", "validated_on"},
                          where);
    TemplateSpec tmpl;
    tmpl.name = r.string_field(spec, "name", where, true).value_or("");
    tmpl.source = r.string_field(spec, "source", where, true).value_or("");
    tmpl.kernel = r.string_field(spec, "kernel", where, true).value_or("");
    tmpl.archs = r.string_list(spec, "archs", where, false);
    for (const TemplateSpec& other : family.templates)
      if (!tmpl.name.empty() && other.name == tmpl.name)
        r.error(field_path(where, "name"),
                "template " + quote_client_text(tmpl.name) + " is declared twice");
    if (!tmpl.kernel.empty() && !is_identifier(tmpl.kernel))
      r.error(field_path(where, "kernel"), "must be an extern \"C\" identifier");
    for (const std::string& arch : tmpl.archs)
      if (!is_arch_name(arch))
        r.error(field_path(where, "archs"),
                quote_client_text(arch) + " is not an NVRTC target like sm_90a");
    // Read by the API from the manifest as written (GET /v1/families); checked here.
    for (const std::string& arch : r.string_list(spec, "validated_on", where, false))
      if (std::find(tmpl.archs.begin(), tmpl.archs.end(), arch) == tmpl.archs.end())
        r.error(field_path(where, "validated_on"),
                quote_client_text(arch) + " is not one of the template's archs");
    if (!tmpl.source.empty()) {
      const auto file = family.dir / tmpl.source;
      if (tmpl.source.find('/') != std::string::npos || !std::filesystem::is_regular_file(file))
        r.error(field_path(where, "source"),
                quote_client_text(tmpl.source) + " is not a file in " + family.dir.string());
    }
    if (const ManifestJson* axes = r.member(spec, "axes", where, true);
        axes != nullptr && r.expect_object(*axes, field_path(where, "axes")))
      for (const auto& [name, axis] : axes->items())
        tmpl.axes.push_back(
            parse_axis(r, name, axis, field_path(field_path(where, "axes"), name), tmpl.archs));
    // Counted, not enumerated: a space too large to plan is refused before anything walks it.
    if (const auto too_large = space_too_large(tmpl))
      r.error(field_path(where, "axes"), *too_large);
    if (const ManifestJson* constraints = r.member(spec, "constraints", where, false)) {
      if (!constraints->is_array()) r.error(field_path(where, "constraints"), "must be a list");
      for (std::size_t c = 0; constraints->is_array() && c < constraints->size(); ++c)
        if (auto text =
                r.expression((*constraints)[c], field_path(field_path(where, "constraints"), c)))
          tmpl.constraints.push_back(*text);
    }
    if (const ManifestJson* launch = r.member(spec, "launch", where, true))
      parse_launch(r, *launch, field_path(where, "launch"), tmpl.launch);
    tmpl.options = r.string_list(spec, "options", where, false);
    if (const ManifestJson* args = r.member(spec, "args", where, false)) {
      tmpl.args = parse_arg_list(r, *args, field_path(where, "args"), family);
      if (tmpl.args.empty() && r.ok()) r.error(field_path(where, "args"), "must not be empty");
    }
    if (const ManifestJson* resources = r.member(spec, "resources", where, false);
        resources != nullptr && r.expect_object(*resources, field_path(where, "resources")))
      for (const auto& [name, value] : resources->items()) {
        const std::string at = field_path(field_path(where, "resources"), name);
        if (!is_identifier(name)) r.error(at, "name must be an identifier");
        if (auto text = r.expression(value, at)) tmpl.resources[name] = *text;
      }
    family.templates.push_back(std::move(tmpl));
  }
}

}  // namespace kt
