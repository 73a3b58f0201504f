#include "tuner/family_baseline.hpp"

#include <algorithm>
#include <cctype>

namespace kt {

Tolerance baseline_check_tolerance(const Tolerance& family_tolerance) {
  Tolerance t = family_tolerance;
  t.rtol *= 2;
  t.max_rel_l2 *= 2;
  return t;
}

bool has_speedup_baseline(const Family& family) {
  if (family.baseline) return family.baseline->kind != "external";
  return family.reference.kind != "kernel";
}

nlohmann::json baseline_summary(const Family& family) {
  if (family.baseline)
    return {{"kind", family.baseline->kind},
            {"description", family.baseline->description},
            {"in_process", family.baseline->kind != "external"}};
  return {{"kind", "reference"},
          {"description",
           "the family's reference (" + family.reference.kind + ") run in the problem's dtype"},
          {"in_process", has_speedup_baseline(family)}};
}

CompileRequest reference_compile_request(const Family& family, const std::string& dtype,
                                         const DeviceLimits& limits) {
  if (family.reference.kind != "kernel")
    throw FamilyError("family '" + family.name + "': its reference is not a kernel");
  CompileRequest request;
  request.source_name = family.reference.source;
  const auto source =
      std::find_if(family.sources.begin(), family.sources.end(),
                   [&](const auto& file) { return file.first == request.source_name; });
  if (source == family.sources.end())
    throw FamilyError("family '" + family.name + "': reference source '" + request.source_name +
                      "' is not in its folder");
  request.source = source->second;
  request.headers = family.sources;
  request.kernel = family.reference.kernel;
  request.arch = limits.arch;
  std::string dtype_macro = dtype;
  std::transform(dtype_macro.begin(), dtype_macro.end(), dtype_macro.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  request.options = {"-DKT_DTYPE_" + dtype_macro, "-DKT_SM=" + std::to_string(limits.sm)};
  return request;
}

}  // namespace kt
