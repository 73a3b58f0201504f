// Helpers shared by the GEMM template tests: the shipped gemm family, a template's survivors for a
// shape, a covering set of them (every axis value at least once), and NVRTC compiles of configs,
// two at a time (CI has two cores).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt::test {

const Family& gemm_family();
const TemplateSpec& gemm_template(const std::string& name);

// The arch's table limits with an H100 SXM's SM count, so grid-size constraints act as on a GPU.
DeviceLimits gemm_limits(const std::string& arch);

Shape gemm_shape(std::int64_t m, std::int64_t n, std::int64_t k);

// The template's variants that survive the constraints for a shape.
std::vector<VariantPlan> gemm_survivors(const std::string& tmpl, const Shape& shape,
                                        const DeviceLimits& limits,
                                        const std::string& dtype = "bf16");

// Greedy cover: keeps picking the config that adds the most unseen (axis, value) pairs.
std::vector<Config> covering_configs(const std::vector<Config>& configs);

CompileRequest gemm_compile_request(const TemplateSpec& tmpl, const Config& config,
                                    const std::string& dtype, const DeviceLimits& limits);

// Compiles each (config, dtype), two at a time; results in the same order.
std::vector<CompileResult> compile_pairwise(const TemplateSpec& tmpl,
                                            const std::vector<std::pair<Config, std::string>>& jobs,
                                            const DeviceLimits& limits);

}  // namespace kt::test
