#include "engine/job_compile.hpp"

#include <sstream>
#include <utility>

#include "tuner/compile/cubin_resources.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

const TemplateSpec* find_template(const Family& family, const std::string& name) {
  for (const TemplateSpec& tmpl : family.templates)
    if (tmpl.name == name) return &tmpl;
  return nullptr;
}

std::string first_error_line(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

VariantOutcome failed(VariantStatus status, std::string gate, std::string reason) {
  VariantOutcome outcome;
  outcome.status = status;
  outcome.failed_gate = std::move(gate);
  outcome.reason = std::move(reason);
  return outcome;
}

// Gate 2b: the kernel's resources (read from its cubin) against what the device gives one block.
std::optional<std::string> resource_overflow(const ResourceUsage& usage, const LaunchDims& launch,
                                             const DeviceLimits& limits) {
  const long long threads =
      static_cast<long long>(launch.block[0]) * launch.block[1] * launch.block[2];
  if (threads > limits.max_threads)
    return std::to_string(threads) + " threads per block > " + std::to_string(limits.max_threads);
  if (usage.registers * threads > limits.regs_per_block)
    return std::to_string(usage.registers) + " registers x " + std::to_string(threads) +
           " threads > " + std::to_string(limits.regs_per_block) + " registers per block";
  const long long smem = static_cast<long long>(usage.static_smem_bytes) + launch.dynamic_smem;
  if (limits.smem_optin > 0 && smem > limits.smem_optin)
    return std::to_string(smem) + " bytes shared memory > " + std::to_string(limits.smem_optin) +
           " bytes opt-in limit";
  return std::nullopt;
}

}  // namespace

CompiledVariant compile_variant(const KernelLookup& cached, const KernelCompiler& compile,
                                const Family& family, const JobRecord& job,
                                const VariantRecord& variant, const DeviceLimits& limits) {
  CompiledVariant out;
  out.variant_id = variant.id;
  out.arch = limits.arch;
  const TemplateSpec* tmpl = find_template(family, variant.template_name);
  if (tmpl == nullptr) {
    out.failure = failed(VariantStatus::compile_error, "compile",
                         "template '" + variant.template_name + "' no longer in the family");
    return out;
  }
  out.kernel = tmpl->kernel;

  try {
    out.full = instantiate(family, *tmpl, variant.config, job.shape, job.dtype, limits);
    if (const Shape smoke = smoke_shape_for(family, job.shape);
        !smoke.empty() && smoke != job.shape)
      out.smoke = instantiate(family, *tmpl, variant.config, smoke, job.dtype, limits);
  } catch (const std::exception& e) {
    out.failure =
        failed(VariantStatus::launch_failed, "launch", std::string("manifest: ") + e.what());
    return out;
  }

  const CompileRequest request = compile_request(family, *tmpl, variant.config, job.dtype, limits);
  const std::string key = compile_cache_key(request);
  out.kernel_key = key;

  CompileResult result;
  std::optional<VariantOutcome> process_failure;
  if (auto blob = cached(key)) {
    result.ok = true;
    result.cubin = std::move(blob->cubin);
    result.log = std::move(blob->log);
    result.resources = blob->resources;
    out.cache_hit = true;
    // Rows stored while resources came from the ptxas log alone hold 0 registers where that log
    // was empty: read the cached cubin again rather than serve the zeros.
    if (result.resources.registers <= 0) {
      try {
        result.resources = kernel_resources(result.cubin, tmpl->kernel, result.log).usage;
      } catch (const CubinError& e) {
        result.ok = false;
        result.log = std::string("error reading the cached kernel's resources from its cubin: ") +
                     e.what() + "\n" + result.log;
      }
    }
  } else {
    CompileReply reply = compile(request);
    result = std::move(reply.result);
    if (reply.outcome != CompileReply::Outcome::answered) {
      result.ok = false;
      result.cubin.clear();
      result.log = reply.reason;
      process_failure =
          failed(reply.outcome == CompileReply::Outcome::timed_out ? VariantStatus::hang
                                                                   : VariantStatus::crashed,
                 "compile", reply.reason);
    }
  }
  result.key = key;
  out.cubin = std::exchange(result.cubin, {});
  const CompileResult& compiled = out.compile.emplace(std::move(result));
  if (process_failure)
    out.failure = std::move(process_failure);
  else if (!compiled.ok)
    out.failure = failed(VariantStatus::compile_error, "compile", first_error_line(compiled.log));
  else if (auto overflow = resource_overflow(compiled.resources, out.full.launch, limits))
    out.failure = failed(VariantStatus::resource_exceeded, "resources", *overflow);
  return out;
}

std::optional<CompiledVariant> reload_compiled(const KernelLookup& cached, const Family& family,
                                               const JobRecord& job, const VariantRecord& variant,
                                               const DeviceLimits& limits) {
  const TemplateSpec* tmpl = find_template(family, variant.template_name);
  if (tmpl == nullptr || variant.kernel_key.empty()) return std::nullopt;
  auto blob = cached(variant.kernel_key);
  if (!blob || blob->cubin.empty()) return std::nullopt;
  CompiledVariant out;
  out.variant_id = variant.id;
  out.arch = limits.arch;
  out.kernel = tmpl->kernel;
  out.kernel_key = variant.kernel_key;
  out.cubin = std::move(blob->cubin);
  out.cache_hit = true;
  out.full = instantiate(family, *tmpl, variant.config, job.shape, job.dtype, limits);
  if (const Shape smoke = smoke_shape_for(family, job.shape); !smoke.empty() && smoke != job.shape)
    out.smoke = instantiate(family, *tmpl, variant.config, smoke, job.dtype, limits);
  return out;
}

}  // namespace kt
