#include "tuner/arg_parser.hpp"
#include "tuner/client_values.hpp"

#include <algorithm>

namespace kt {
namespace {

constexpr std::size_t kMaxTensorRank = 5;  // cuTensorMapEncodeTiled's limit

bool names_buffer(const Family& family, const ManifestJson& value) {
  return value.is_string() &&
         std::any_of(family.buffers.begin(), family.buffers.end(),
                     [&](const BufferSpec& b) { return b.name == value.get<std::string>(); });
}

// A list of 1..kMaxTensorRank expressions.
bool read_extents(ManifestReader& r, const ManifestJson& spec, const char* key,
                  const std::string& where, std::vector<std::string>& out) {
  const ManifestJson* list = r.member(spec, key, where, true);
  if (list == nullptr) return false;
  const std::string path = field_path(where, key);
  if (!list->is_array() || list->empty() || list->size() > kMaxTensorRank) {
    r.error(path, "must be a list of 1 to 5 expressions, innermost dimension first");
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (auto text = r.expression((*list)[i], field_path(path, i)))
      out.push_back(*text);
    else
      ok = false;
  }
  return ok;
}

bool parse_tensor_map(ManifestReader& r, const ManifestJson& spec, const std::string& where,
                      const Family& family, ArgSpec& arg) {
  r.reject_unknown_keys(spec, {"tensor_map", "dims", "box", "swizzle"}, where);
  const ManifestJson& buffer = spec.at("tensor_map");
  if (!names_buffer(family, buffer)) {
    r.error(field_path(where, "tensor_map"), "must name a declared buffer, got " + buffer.dump());
    return false;
  }
  arg.kind = ArgSpec::Kind::tensor_map;
  arg.value = buffer.get<std::string>();
  bool ok = read_extents(r, spec, "dims", where, arg.dims);
  ok = read_extents(r, spec, "box", where, arg.box) && ok;
  if (ok && arg.dims.size() != arg.box.size()) {
    r.error(field_path(where, "box"), "needs one entry per entry of dims");
    ok = false;
  }
  if (spec.contains("swizzle")) {
    if (auto text = r.expression(spec.at("swizzle"), field_path(where, "swizzle")))
      arg.swizzle = *text;
    else
      ok = false;
  }
  return ok;
}

}  // namespace

std::vector<ArgSpec> parse_arg_list(ManifestReader& r, const ManifestJson& list,
                                    const std::string& where, const Family& family,
                                    bool for_reference) {
  std::vector<ArgSpec> args;
  if (!list.is_array()) {
    r.error(where, "must be a list");
    return args;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = field_path(where, i);
    const ManifestJson& spec = list[i];
    if (spec.is_object() && spec.contains("tensor_map")) {
      ArgSpec arg;
      if (parse_tensor_map(r, spec, at, family, arg)) args.push_back(std::move(arg));
      continue;
    }
    if (!spec.is_object() || spec.size() != 1) {
      r.error(at, "must be an object with one of: buffer, i32, i64, f32, tensor_map");
      continue;
    }
    const std::string kind = spec.begin().key();
    const ManifestJson& value = spec.begin().value();
    ArgSpec arg;
    if (kind == "buffer") {
      arg.kind = ArgSpec::Kind::buffer;
      if (!names_buffer(family, value)) {
        r.error(field_path(at, "buffer"), "must name a declared buffer, got " + value.dump());
        continue;
      }
      arg.value = value.get<std::string>();
    } else if (kind == "i32" || kind == "i64" || kind == "f32") {
      arg.kind = kind == "i32"   ? ArgSpec::Kind::i32
                 : kind == "i64" ? ArgSpec::Kind::i64
                                 : ArgSpec::Kind::f32;
      // f32 scalars may be written as plain JSON numbers ("alpha": 1.0).
      if (kind == "f32" && value.is_number())
        arg.value = value.dump();
      else if (auto text = r.expression(value, field_path(at, kind)))
        arg.value = *text;
      else
        continue;
    } else if (kind == "reference_output" && for_reference) {
      if (value != true) {
        r.error(field_path(at, kind), "must be true");
        continue;
      }
      arg.kind = ArgSpec::Kind::reference_output;
    } else {
      r.error(at, "unknown argument kind " + quote_client_text(kind) +
                      " (expected buffer, i32, i64, f32, " +
                      (for_reference ? "reference_output" : "tensor_map") + ")");
      continue;
    }
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace kt
