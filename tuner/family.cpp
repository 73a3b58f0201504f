#include "tuner/family.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "tuner/arg_parser.hpp"
#include "tuner/client_values.hpp"
#include "tuner/compile/sha256.hpp"
#include "tuner/error_bound.hpp"
#include "tuner/family_checks.hpp"
#include "tuner/manifest_reader.hpp"
#include "tuner/reference_parser.hpp"
#include "tuner/template_parser.hpp"
#include "tuner/text.hpp"

namespace kt {
namespace {

// e4m3 and e5m2: fp8 problems, named by the dtype of their "in" operand (outputs are declared).
// nvfp4: block-scaled e2m1 problems, every buffer's dtype declared (e2m1x2 values, ue4m3 factors).
const std::set<std::string> kJobDtypes{"bf16", "fp16", "f32", "e4m3", "e5m2", "nvfp4"};
// e2m1x2: a byte holding two e2m1 values (elements count bytes); ue4m3: an unsigned e4m3 factor.
const std::set<std::string> kBufferDtypes{"in",  "bf16", "fp16", "f32",    "i32",
                                          "u32", "e4m3", "e5m2", "e2m1x2", "ue4m3"};
const std::set<std::string> kBufferRoles{"input", "output", "scratch"};

// A family's file, its error one of the family's (load_family's callers catch FamilyError).
std::string read_family_file(const std::filesystem::path& file) {
  try {
    return read_text_file(file);
  } catch (const FamilyError&) {
    throw;
  } catch (const std::runtime_error& error) {
    throw FamilyError(error.what());
  }
}

void parse_dims(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* dims = r.member(root, "dims", "", true);
  if (dims == nullptr || !r.expect_object(*dims, "dims")) return;
  if (dims->empty()) r.error("dims", "must declare at least one dimension");
  for (const auto& [name, spec] : dims->items()) {
    const std::string where = field_path("dims", name);
    if (!is_identifier(name)) r.error(where, "name must be an identifier");
    if (!r.expect_object(spec, where)) continue;
    r.reject_unknown_keys(spec, {"min", "max", "default", "description"}, where);
    DimSpec dim;
    dim.name = name;
    dim.min = r.integer_field(spec, "min", where, false).value_or(dim.min);
    dim.max = r.integer_field(spec, "max", where, false).value_or(dim.max);
    dim.default_value = r.integer_field(spec, "default", where, false);
    dim.description = r.string_field(spec, "description", where, false).value_or("");
    if (dim.min < 0) r.error(field_path(where, "min"), "must not be negative");
    if (dim.max < dim.min) r.error(field_path(where, "max"), "must not be below min");
    if (dim.default_value && (*dim.default_value < dim.min || *dim.default_value > dim.max))
      r.error(field_path(where, "default"), "must lie within [min, max]");
    family.dims.push_back(std::move(dim));
  }
}

void parse_buffers(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* buffers = r.member(root, "buffers", "", true);
  if (buffers == nullptr) return;
  if (!buffers->is_array() || buffers->empty()) {
    r.error("buffers", "must be a non-empty list");
    return;
  }
  for (std::size_t i = 0; i < buffers->size(); ++i) {
    const std::string where = field_path("buffers", i);
    const ManifestJson& spec = (*buffers)[i];
    if (!r.expect_object(spec, where)) continue;
    r.reject_unknown_keys(spec, {"name", "role", "dtype", "elements", "range", "description"},
                          where);
    BufferSpec buffer;
    buffer.name = r.string_field(spec, "name", where, true).value_or("");
    buffer.role = r.string_field(spec, "role", where, true).value_or("");
    buffer.dtype = r.string_field(spec, "dtype", where, true).value_or("");
    buffer.elements = r.expression_field(spec, "elements", where, true).value_or("1");
    if (const ManifestJson* range = r.member(spec, "range", where, false)) {
      if (range->is_array() && range->size() == 2 && (*range)[0].is_number() &&
          (*range)[1].is_number() && (*range)[0].get<double>() < (*range)[1].get<double>() &&
          std::abs((*range)[0].get<double>()) <= 1e4 &&
          std::abs((*range)[1].get<double>()) <= 1e4) {
        buffer.range_low = (*range)[0].get<double>();
        buffer.range_high = (*range)[1].get<double>();
      } else {
        r.error(field_path(where, "range"), "must be [low, high] with -1e4 <= low < high <= 1e4");
      }
    }
    if (!buffer.name.empty() && !is_identifier(buffer.name))
      r.error(field_path(where, "name"), quote_client_text(buffer.name) + " is not an identifier");
    if (!buffer.role.empty() && !kBufferRoles.count(buffer.role))
      r.error(field_path(where, "role"),
              quote_client_text(buffer.role) + " is not input, output or scratch");
    if (!buffer.dtype.empty() && !kBufferDtypes.count(buffer.dtype))
      r.error(field_path(where, "dtype"),
              quote_client_text(buffer.dtype) +
                  " is not one of in, bf16, fp16, f32, i32, u32, e4m3, e5m2, e2m1x2, ue4m3");
    if (buffer.dtype == "in" &&
        std::count(family.dtypes.begin(), family.dtypes.end(), std::string("nvfp4")))
      r.error(field_path(where, "dtype"),
              "an nvfp4 family names every buffer's dtype (e2m1x2, ue4m3, ...): nvfp4 is a "
              "problem's type, not an element's");
    for (const BufferSpec& other : family.buffers)
      if (!buffer.name.empty() && other.name == buffer.name)
        r.error(field_path(where, "name"),
                "buffer " + quote_client_text(buffer.name) + " is declared twice");
    family.buffers.push_back(std::move(buffer));
  }
  const bool has_output = std::any_of(family.buffers.begin(), family.buffers.end(),
                                      [](const BufferSpec& b) { return b.role == "output"; });
  if (!has_output) r.error("buffers", "needs at least one output buffer to check");
}

void parse_args(ManifestReader& r, const ManifestJson& root, Family& family) {
  if (const ManifestJson* args = r.member(root, "args", "", true))
    family.args = parse_arg_list(r, *args, "args", family);
}

// Whether the family's reference computes the magnitude a tolerance's magnitude term needs.
bool has_magnitude(const ReferenceSpec& reference) {
  return reference.kind == "cublas_gemm" || reference.magnitude.has_value();
}

// One field of a tolerance: a finite number in [0, 1). At 1 (rtol or rel_l2) an all-zero output
// would pass, so anything that large is a mistake.
std::optional<double> tolerance_number(ManifestReader& r, const ManifestJson& spec,
                                       const std::string& key, const std::string& where) {
  const ManifestJson* value = r.member(spec, key, where, true);
  if (value == nullptr) return std::nullopt;
  const std::string path = field_path(where, key);
  if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() < 0) {
    r.error(path, "must be a non-negative number");
    return std::nullopt;
  }
  if (key != "atol" && key != "magnitude" && value->get<double>() >= 1) {
    r.error(path, "must be below 1 (at 1 an all-zero output would pass)");
    return std::nullopt;
  }
  return value->get<double>();
}

// The tolerance's magnitude c: 0 when absent; nullopt (and an error) when it is not a number, when
// the family's reference computes no magnitude, or when it is so large that an all-zero output
// would pass (with K = 1 the term is c * u_out * m and m >= |ref|).
std::optional<double> magnitude_constant(ManifestReader& r, const ManifestJson& spec,
                                         const std::string& where, const std::string& dtype,
                                         const Family& family) {
  if (!spec.contains("magnitude")) return 0.0;
  const std::optional<double> c = tolerance_number(r, spec, "magnitude", where);
  if (!c) return std::nullopt;
  const std::string path = field_path(where, "magnitude");
  // The bound is on the output, whose dtype an fp8 family declares (the job's is its inputs').
  std::string output_dtype = dtype;
  for (const BufferSpec& buffer : family.buffers)
    if (buffer.role == "output" && buffer.dtype != "in" && kJobDtypes.count(buffer.dtype))
      output_dtype = buffer.dtype;
  if (kJobDtypes.count(output_dtype) && *c * unit_roundoff(output_dtype) >= 1) {
    r.error(path, fmt::format("must be below {} (1 / the unit roundoff of {}: at that an all-zero "
                              "output would pass)",
                              1 / unit_roundoff(output_dtype), output_dtype));
    return std::nullopt;
  }
  if (*c > 0 && !has_magnitude(family.reference)) {
    r.error(path,
            "needs a reference that computes a magnitude: cublas_gemm, or a kernel reference "
            "with a \"magnitude\" kernel");
    return std::nullopt;
  }
  return c;
}

// "tolerance": {"<dtype>": {"atol": A, "rtol": R, "rel_l2": L, "magnitude"?: C}, ...}, one for
// every dtype of the family. An element of the output is bad when it is not finite or
// |out - ref| > A + R * |ref| + C * u(dtype, K) * m; the whole output also needs
// ||out - ref|| / ||ref|| <= L. R covers rounding the fp32 result to the dtype (a half ulp is 2^-8
// relative for bf16, 2^-11 for fp16), A what a different but correct order of fp32 accumulation
// (split-K, another tiling) moves a value near zero, and C the rounding of partial sums, which
// grows with the magnitude m the reference computes for the element (tuner/error_bound.hpp; C
// needs a reference that computes one). kernel_templates/README.md explains the shipped values. The
// old form, a plain number per dtype (the max rel_l2 alone, which let a wrong element through),
// is refused with a message saying so. Keys starting with '_' or '$' are comments.
void parse_tolerance(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* tolerance = r.member(root, "tolerance", "", true);
  if (tolerance == nullptr || !r.expect_object(*tolerance, "tolerance")) return;
  for (const auto& [dtype, spec] : tolerance->items()) {
    if (dtype.starts_with('_') || dtype.starts_with('$')) continue;  // a comment, as elsewhere
    const std::string where = field_path("tolerance", dtype);
    if (std::find(family.dtypes.begin(), family.dtypes.end(), dtype) == family.dtypes.end()) {
      r.error(where, "dtype " + quote_client_text(dtype) + " is not in dtypes");
      continue;
    }
    if (spec.is_number()) {
      r.error(where,
              "must be an object {\"atol\": A, \"rtol\": R, \"rel_l2\": L}; a plain number (the "
              "old max rel_l2 alone) is no longer accepted: every element is checked");
      continue;
    }
    if (!r.expect_object(spec, where)) continue;
    r.reject_unknown_keys(spec, {"atol", "rtol", "rel_l2", "magnitude"}, where);
    const auto atol = tolerance_number(r, spec, "atol", where);
    const auto rtol = tolerance_number(r, spec, "rtol", where);
    const auto rel_l2 = tolerance_number(r, spec, "rel_l2", where);
    const auto magnitude = magnitude_constant(r, spec, where, dtype, family);
    if (atol && rtol && rel_l2 && magnitude)
      family.tolerance[dtype] = Tolerance{*atol, *rtol, *rel_l2, *magnitude};
  }
  for (const std::string& dtype : family.dtypes)
    if (!family.tolerance.count(dtype) && !tolerance->contains(dtype))
      r.error("tolerance", "no tolerance for dtype " + quote_client_text(dtype));
}

bool is_header(const std::filesystem::directory_entry& entry) {
  const auto ext = entry.path().extension();
  return entry.is_regular_file() && (ext == ".cuh" || ext == ".h");
}

// Every *.cuh / *.h of the folder and of the shared folder common/ beside it (device building
// blocks several families use; a family's own file of the same name wins), plus template sources
// with another extension; sorted by name, so the compile cache key is stable.
void read_sources(Family& family) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(family.dir))
    if (is_header(entry)) files.push_back(entry.path());
  const auto common = family.dir.parent_path() / kCommonSourcesFolder;
  std::error_code ec;
  if (family.dir.filename() != kCommonSourcesFolder && std::filesystem::is_directory(common, ec))
    for (const auto& entry : std::filesystem::directory_iterator(common)) {
      const bool shadowed = std::any_of(files.begin(), files.end(), [&](const auto& own) {
        return own.filename() == entry.path().filename();
      });
      if (is_header(entry) && !shadowed) files.push_back(entry.path());
    }
  for (const TemplateSpec& tmpl : family.templates) {
    const auto file = family.dir / tmpl.source;
    if (std::find(files.begin(), files.end(), file) == files.end() &&
        std::filesystem::is_regular_file(file))
      files.push_back(file);
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  for (const auto& file : files)
    family.sources.emplace_back(file.filename().string(), read_family_file(file));
}

}  // namespace

Family load_family(const std::filesystem::path& dir) {
  const auto file = dir / "manifest.json";
  ManifestJson root;
  try {
    root = ManifestJson::parse(read_family_file(file));
  } catch (const ManifestJson::parse_error& e) {
    throw FamilyError(file.string() + ": not valid JSON: " + e.what());
  } catch (const ManifestJson::out_of_range& e) {  // a number beyond double's range
    throw FamilyError(file.string() + ": a number out of range: " + e.what());
  }
  ManifestReader r(file);
  if (!root.is_object()) throw FamilyError(file.string() + ": must hold a JSON object");
  r.reject_unknown_keys(
      root,
      {"name", "description", "dims", "dtypes", "shape_constraints", "smoke_shape", "flops",
       "bytes", "buffers", "args", "reference", "baseline", "tolerance", "templates"},
      "");

  Family family;
  family.dir = dir;
  family.manifest = root;
  family.name = r.string_field(root, "name", "", true).value_or("");
  if (!family.name.empty() && !is_identifier(family.name))
    r.error("name", quote_client_text(family.name) + " must be an identifier");
  family.description = r.string_field(root, "description", "", false).value_or("");
  parse_dims(r, root, family);
  family.dtypes = r.string_list(root, "dtypes", "", true);
  if (family.dtypes.empty()) r.error("dtypes", "must list at least one dtype");
  for (const std::string& dtype : family.dtypes)
    if (!kJobDtypes.count(dtype))
      r.error("dtypes", quote_client_text(dtype) + " is not bf16, fp16, f32, e4m3, e5m2 or nvfp4");
  if (const ManifestJson* constraints = r.member(root, "shape_constraints", "", false)) {
    if (!constraints->is_array()) r.error("shape_constraints", "must be a list");
    for (std::size_t i = 0; constraints->is_array() && i < constraints->size(); ++i)
      if (auto text = r.expression((*constraints)[i], field_path("shape_constraints", i)))
        family.shape_constraints.push_back(*text);
  }
  if (const ManifestJson* smoke = r.member(root, "smoke_shape", "", false)) {
    if (r.expect_object(*smoke, "smoke_shape"))
      for (const auto& [name, value] : smoke->items())
        if (auto text = r.expression(value, field_path("smoke_shape", name)))
          family.smoke_shape[name] = *text;
  }
  family.flops = r.expression_field(root, "flops", "", true).value_or("0");
  family.bytes = r.expression_field(root, "bytes", "", true).value_or("0");
  parse_buffers(r, root, family);
  parse_args(r, root, family);
  parse_reference(r, root, family);
  parse_baseline(r, root, family);
  parse_tolerance(r, root, family);
  parse_templates(r, root, family);
  if (r.ok()) check_family_names(r, family);  // needs a structurally sound family
  r.throw_if_errors();
  read_sources(family);
  family.source_hash = family_source_hash(family);
  return family;
}

std::string family_source_hash(const Family& family) {
  Sha256 hash;
  // Sorted keys, as always: a result does not depend on the key order (shapes and configs are
  // keyed by name), so results stay current; the registrar compares the order apart.
  hash.update_field(nlohmann::json(family.manifest).dump());
  for (const auto& [name, text] : family.sources) {
    hash.update_field(name);
    hash.update_field(text);
  }
  // A reference kernel's own source need not be among the headers.
  if (!family.reference.source.empty()) {
    const auto file = family.dir / family.reference.source;
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec)) {
      hash.update_field(family.reference.source);
      hash.update_field(read_family_file(file));
    }
  }
  return hash.hex_digest();
}

const Tolerance& tolerance_for(const Family& family, const std::string& dtype) {
  const auto it = family.tolerance.find(dtype);
  if (it == family.tolerance.end())
    throw FamilyError("family " + quote_client_text(family.name) + " has no tolerance for dtype " +
                      quote_client_text(dtype));
  return it->second;
}

const std::vector<ArgSpec>& kernel_args(const Family& family, const TemplateSpec& tmpl) {
  return tmpl.args.empty() ? family.args : tmpl.args;
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "e4m3" || dtype == "e5m2" || dtype == "ue4m3") return 1;
  if (dtype == "e2m1x2") return 1;  // a byte of two e2m1 values
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  return 0;
}

}  // namespace kt
