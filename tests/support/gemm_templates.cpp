#include "support/gemm_templates.hpp"

#include <future>

#include "support/shipped_family.hpp"

namespace kt::test {

const Family& gemm_family() {
  return shipped_family("gemm");
}

const TemplateSpec& gemm_template(const std::string& name) {
  return template_named(gemm_family(), name);
}

DeviceLimits gemm_limits(const std::string& arch) {
  return limits_with_sms(arch, 132);
}

Shape gemm_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {{"M", m}, {"N", n}, {"K", k}};
}

std::vector<VariantPlan> gemm_survivors(const std::string& tmpl, const Shape& shape,
                                        const DeviceLimits& limits, const std::string& dtype) {
  return survivors(gemm_family(), tmpl, shape, dtype, limits);
}

std::vector<std::pair<Config, std::string>> covering_jobs(const std::string& tmpl,
                                                          const std::vector<Shape>& shapes,
                                                          const DeviceLimits& limits) {
  std::vector<VariantPlan> all;
  for (const Shape& shape : shapes)
    for (VariantPlan& plan : gemm_survivors(tmpl, shape, limits)) all.push_back(std::move(plan));
  const std::vector<VariantPlan> chosen = covering_set(all);
  std::vector<std::pair<Config, std::string>> jobs;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    jobs.emplace_back(chosen[i].config, i % 2 == 0 ? "bf16" : "fp16");
  return jobs;
}

std::vector<CompileResult> compile_pairwise(const TemplateSpec& tmpl,
                                            const std::vector<std::pair<Config, std::string>>& jobs,
                                            const DeviceLimits& limits) {
  std::vector<CompileResult> results(jobs.size());
  auto compile = [&](std::size_t i) {
    return compile_variant(gemm_family(), tmpl, jobs[i].first, jobs[i].second, limits);
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
