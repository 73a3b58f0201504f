#include "engine/variant_launch.hpp"

#include "engine/job_target.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

// The launch view says "pointer" where the worker protocol says "buffer": a client passes a device
// pointer there.
const char* arg_type(ArgInstance::Kind kind) {
  return kind == ArgInstance::Kind::buffer ? "pointer" : arg_kind_name(kind);
}

nlohmann::json param_json(const ArgSpec& spec, const ArgInstance& arg) {
  nlohmann::json param = {{"type", arg_type(arg.kind)}};
  switch (arg.kind) {
    case ArgInstance::Kind::buffer:
      param["buffer"] = arg.buffer;
      break;
    case ArgInstance::Kind::tensor_map:
      // A CUtensorMap passed by value (__grid_constant__, 64-byte aligned): a dense row-major
      // view of the buffer, innermost dimension first.
      param["buffer"] = arg.buffer;
      param["dims"] = arg.dims;
      param["box"] = arg.box;
      param["swizzle_bytes"] = arg.swizzle;
      break;
    case ArgInstance::Kind::i32:
    case ArgInstance::Kind::i64:
      param["expression"] = spec.value;
      param["value"] = static_cast<std::int64_t>(arg.value);
      break;
    case ArgInstance::Kind::f32:
      param["expression"] = spec.value;
      param["value"] = arg.value;
      break;
  }
  return param;
}

}  // namespace

DeviceLimits launch_limits(const JobRecord& job, const std::vector<DeviceInfo>& devices) {
  try {
    return resolve_target(target_spec_of(job), devices).limits;
  } catch (const TargetError&) {
    if (auto limits = limits_for_arch(job.arch)) return *limits;
    throw FamilyError("no device limits for arch " + job.arch);
  }
}

nlohmann::json variant_launch_json(const Family& family, const JobRecord& job,
                                   const VariantRecord& variant, const std::string& arch,
                                   const DeviceLimits& limits) {
  const TemplateSpec* tmpl = nullptr;
  for (const TemplateSpec& candidate : family.templates)
    if (candidate.name == variant.template_name) tmpl = &candidate;
  if (tmpl == nullptr)
    throw FamilyError("template '" + variant.template_name + "' is no longer in family " +
                      family.name);
  const ProblemInstance problem =
      instantiate(family, *tmpl, variant.config, job.shape, job.dtype, limits);
  const std::vector<ArgSpec>& specs = kernel_args(family, *tmpl);
  nlohmann::json params = nlohmann::json::array();
  for (std::size_t i = 0; i < problem.args.size() && i < specs.size(); ++i)
    params.push_back(param_json(specs[i], problem.args[i]));
  nlohmann::json buffers = nlohmann::json::array();
  for (const BufferInstance& buffer : problem.buffers) {
    buffers.push_back({{"name", buffer.name},
                       {"role", buffer.role},
                       {"dtype", buffer.dtype},
                       {"elements", buffer.elements}});
    if (buffer.range_low != -1.0 || buffer.range_high != 1.0)
      buffers.back()["range"] = {buffer.range_low, buffer.range_high};
  }
  return {{"variant_id", variant.id},
          {"kernel", tmpl->kernel},
          {"arch", arch},
          {"grid", problem.launch.grid},
          {"block", problem.launch.block},
          {"cluster", problem.launch.cluster},
          {"dynamic_smem_bytes", problem.launch.dynamic_smem},
          {"params", std::move(params)},
          {"buffers", std::move(buffers)},
          {"shape", job.shape},
          {"dtype", job.dtype}};
}

std::optional<nlohmann::json> stored_variant_launch(const FamilyRegistry& families,
                                                    const std::vector<DeviceInfo>& devices,
                                                    const JobRecord& job,
                                                    const VariantRecord& variant,
                                                    std::string* why) {
  const Family* family = families.find(job.family);
  if (family == nullptr) {
    *why = "family " + job.family + " is no longer loaded";
    return std::nullopt;
  }
  try {
    return variant_launch_json(*family, job, variant, job.arch, launch_limits(job, devices));
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
}

}  // namespace kt
