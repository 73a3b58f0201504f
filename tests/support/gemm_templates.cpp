#include "support/gemm_templates.hpp"

#include <future>
#include <set>
#include <stdexcept>

#include "support/test_paths.hpp"

namespace kt::test {

const Family& gemm_family() {
  static const Family family = load_family(source_dir() / "kernel_templates" / "gemm");
  return family;
}

const TemplateSpec& gemm_template(const std::string& name) {
  for (const TemplateSpec& tmpl : gemm_family().templates)
    if (tmpl.name == name) return tmpl;
  throw std::runtime_error("no template " + name + " in the gemm family");
}

DeviceLimits gemm_limits(const std::string& arch) {
  auto limits = limits_for_arch(arch);
  if (!limits) throw std::runtime_error("no limits for " + arch);
  limits->sm_count = 132;
  return *limits;
}

Shape gemm_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}

std::vector<VariantPlan> gemm_survivors(const std::string& tmpl, const Shape& shape,
                                        const DeviceLimits& limits, const std::string& dtype) {
  std::vector<VariantPlan> out;
  for (VariantPlan& plan : enumerate_variants(gemm_family(), shape, dtype, limits))
    if (plan.tmpl != nullptr && plan.tmpl->name == tmpl && !plan.unsupported_arch &&
        !plan.pruned_by)
      out.push_back(std::move(plan));
  return out;
}

std::vector<Config> covering_configs(const std::vector<Config>& configs) {
  std::set<std::pair<std::string, std::int64_t>> seen;
  std::vector<Config> chosen;
  for (;;) {
    const Config* best = nullptr;
    std::size_t best_gain = 0;
    for (const Config& config : configs) {
      std::size_t gain = 0;
      for (const auto& [name, value] : config) gain += seen.count({name, value}) == 0;
      if (gain > best_gain) {
        best_gain = gain;
        best = &config;
      }
    }
    if (best == nullptr) return chosen;
    for (const auto& [name, value] : *best) seen.insert({name, value});
    chosen.push_back(*best);
  }
}

CompileRequest gemm_compile_request(const TemplateSpec& tmpl, const Config& config,
                                    const std::string& dtype, const DeviceLimits& limits) {
  CompileRequest request;
  request.source_name = tmpl.source;
  for (const auto& [name, text] : gemm_family().sources)
    if (name == tmpl.source) request.source = text;
  request.headers = gemm_family().sources;
  request.kernel = tmpl.kernel;
  request.arch = limits.arch;
  request.options = variant_defines(tmpl, config, dtype, limits);
  return request;
}

std::vector<CompileResult> compile_pairwise(const TemplateSpec& tmpl,
                                            const std::vector<std::pair<Config, std::string>>& jobs,
                                            const DeviceLimits& limits) {
  std::vector<CompileResult> results(jobs.size());
  auto compile = [&](std::size_t i) {
    return compile_kernel(gemm_compile_request(tmpl, jobs[i].first, jobs[i].second, limits));
  };
  for (std::size_t i = 0; i < jobs.size(); i += 2) {
    auto second = i + 1 < jobs.size() ? std::async(std::launch::async, compile, i + 1)
                                      : std::future<CompileResult>();
    results[i] = compile(i);
    if (second.valid()) results[i + 1] = second.get();
  }
  return results;
}

}  // namespace kt::test
