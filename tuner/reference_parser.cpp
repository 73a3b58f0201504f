#include "tuner/reference_parser.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "tuner/arg_parser.hpp"
#include "tuner/client_values.hpp"
#include "tuner/template_parser.hpp"

namespace kt {
namespace {

// Buffer-naming parameters each in-process kind needs; the rest of its params are dims.
const std::map<std::string, std::vector<const char*>> kBufferParams{
    {"cublas_gemm", {"a", "b", "c"}},
    {"cublaslt_gemm", {"a", "b", "c"}},
    {"cublaslt_fp8_gemm", {"a", "b", "c", "scale_a", "scale_b"}},  // optional "block_scaled"
    {"unfused_dual_gemm_silu", {"a", "b1", "b2", "c"}},
};
const std::map<std::string, std::vector<const char*>> kDimParams{
    {"cublas_gemm", {"m", "n", "k"}},
    {"cublaslt_gemm", {"m", "n", "k"}},
    {"cublaslt_fp8_gemm", {"m", "n", "k"}},
    {"unfused_dual_gemm_silu", {"g", "m", "n", "k"}},
};

bool is_buffer(const Family& family, const std::string& name) {
  return std::any_of(family.buffers.begin(), family.buffers.end(),
                     [&](const BufferSpec& b) { return b.name == name; });
}

bool is_output(const Family& family, const std::string& name) {
  return std::any_of(family.buffers.begin(), family.buffers.end(),
                     [&](const BufferSpec& b) { return b.name == name && b.role == "output"; });
}

// The params of an in-process kind: its required buffer and dim members, then every member
// (other than `skip`) as a buffer name, an expression, a number or a boolean.
nlohmann::json read_params(ManifestReader& r, const ManifestJson& spec, const std::string& where,
                           const std::string& kind, const Family& family,
                           const std::set<std::string>& skip) {
  if (const auto buffers = kBufferParams.find(kind); buffers != kBufferParams.end()) {
    for (const char* key : buffers->second)
      if (const ManifestJson* value = r.member(spec, key, where, true);
          value != nullptr && !(value->is_string() && is_buffer(family, value->get<std::string>())))
        r.error(field_path(where, key), "must name a declared buffer");
    for (const char* key : kDimParams.at(kind)) r.member(spec, key, where, true);
  }
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [key, value] : spec.items()) {
    if (skip.count(key) || key.empty() || key[0] == '_' || key[0] == '$') continue;
    const std::string at = field_path(where, key);
    if (value.is_string() && is_buffer(family, value.get<std::string>())) {
      params[key] = value.get<std::string>();
    } else if (value.is_string()) {
      if (r.expression(value, at)) params[key] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      params[key] = nlohmann::json(value);
    } else {
      r.error(at, "must be a buffer name, an expression, a number or a boolean");
    }
  }
  return params;
}

// "magnitude": {"kernel": entry point of the reference's source, "reduction": K (expression over
// dims), "description": what m is}: the kernel takes the reference's args and launch and writes
// the magnitude of each element where the reference writes its output.
void read_magnitude(ManifestReader& r, const ManifestJson& spec, ReferenceSpec& ref) {
  const std::string where = "reference.magnitude";
  if (!r.expect_object(spec, where)) return;
  r.reject_unknown_keys(spec, {"kernel", "reduction", "description"}, where);
  ReferenceSpec::Magnitude magnitude;
  magnitude.kernel = r.string_field(spec, "kernel", where, true).value_or("");
  magnitude.reduction = r.expression_field(spec, "reduction", where, true).value_or("1");
  magnitude.description = r.string_field(spec, "description", where, true).value_or("");
  if (!magnitude.kernel.empty() && !is_identifier(magnitude.kernel))
    r.error(field_path(where, "kernel"), "must be an extern \"C\" identifier");
  if (!magnitude.kernel.empty() && magnitude.kernel == ref.kernel)
    r.error(field_path(where, "kernel"), "must be another kernel than the reference's own");
  ref.magnitude = std::move(magnitude);
}

void read_kernel_reference(ManifestReader& r, const ManifestJson& spec, Family& family) {
  const std::string where = "reference";
  r.reject_unknown_keys(spec, {"kind", "source", "kernel", "output", "args", "launch", "magnitude"},
                        where);
  ReferenceSpec& ref = family.reference;
  ref.source = r.string_field(spec, "source", where, true).value_or("");
  ref.kernel = r.string_field(spec, "kernel", where, true).value_or("");
  ref.output = r.string_field(spec, "output", where, true).value_or("");
  if (!ref.source.empty()) {
    const auto file = family.dir / ref.source;
    if (ref.source.find('/') != std::string::npos || !std::filesystem::is_regular_file(file))
      r.error(field_path(where, "source"),
              quote_client_text(ref.source) + " is not a file in " + family.dir.string());
  }
  if (!ref.kernel.empty() && !is_identifier(ref.kernel))
    r.error(field_path(where, "kernel"), "must be an extern \"C\" identifier");
  if (!ref.output.empty() && !is_output(family, ref.output))
    r.error(field_path(where, "output"),
            quote_client_text(ref.output) + " is not an output buffer");
  if (const ManifestJson* args = r.member(spec, "args", where, true)) {
    ref.args = parse_arg_list(r, *args, field_path(where, "args"), family, /*for_reference=*/true);
    const auto outputs = std::count_if(ref.args.begin(), ref.args.end(), [](const ArgSpec& a) {
      return a.kind == ArgSpec::Kind::reference_output;
    });
    if (r.ok() && outputs != 1)
      r.error(field_path(where, "args"), "needs exactly one {\"reference_output\": true}");
    for (const ArgSpec& arg : ref.args)
      if (arg.kind == ArgSpec::Kind::tensor_map)
        r.error(field_path(where, "args"), "a reference takes plain pointers, not tensor maps");
  }
  if (const ManifestJson* launch = r.member(spec, "launch", where, true))
    parse_launch(r, *launch, field_path(where, "launch"), ref.launch);
  if (const ManifestJson* magnitude = r.member(spec, "magnitude", where, false))
    read_magnitude(r, *magnitude, ref);
}

}  // namespace

void parse_reference(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* reference = r.member(root, "reference", "", true);
  if (reference == nullptr || !r.expect_object(*reference, "reference")) return;
  family.reference.kind = r.string_field(*reference, "kind", "reference", true).value_or("");
  family.reference.params = nlohmann::json::object();
  if (family.reference.kind == "kernel")
    read_kernel_reference(r, *reference, family);
  else if (family.reference.kind == "cublas_gemm")
    family.reference.params =
        read_params(r, *reference, "reference", "cublas_gemm", family, {"kind"});
  else if (!family.reference.kind.empty())
    r.error("reference.kind", quote_client_text(family.reference.kind) +
                                  " is not a reference the worker knows (cublas_gemm, kernel)");
}

void parse_baseline(ManifestReader& r, const ManifestJson& root, Family& family) {
  const ManifestJson* baseline = r.member(root, "baseline", "", false);
  if (baseline == nullptr || !r.expect_object(*baseline, "baseline")) return;
  BaselineSpec spec;
  spec.kind = r.string_field(*baseline, "kind", "baseline", true).value_or("");
  spec.description = r.string_field(*baseline, "description", "baseline", false).value_or("");
  if (spec.kind == "external") {
    r.reject_unknown_keys(*baseline, {"kind", "description"}, "baseline");
    if (spec.description.empty())
      r.error("baseline.description", "an external baseline must say what it is");
    spec.params = nlohmann::json::object();
  } else if (kBufferParams.count(spec.kind) && spec.kind != "cublas_gemm") {
    spec.params = read_params(r, *baseline, "baseline", spec.kind, family, {"kind", "description"});
  } else if (!spec.kind.empty()) {
    r.error("baseline.kind", quote_client_text(spec.kind) +
                                 " is not a baseline kerntune knows (cublaslt_gemm, "
                                 "cublaslt_fp8_gemm, unfused_dual_gemm_silu, external)");
  }
  family.baseline = std::move(spec);
}

}  // namespace kt
