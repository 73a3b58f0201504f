// GEMM-family shorthands for the template tests, on top of support/variant_cover: the shipped gemm
// family, its templates, an H100's limits, shapes, survivors, and NVRTC compiles of several
// variants two at a time (CI has two cores).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/variant_cover.hpp"

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

// The compile jobs of a covering-set test: the covering set (covering_set) of the template's
// survivors over the shapes, each paired with a dtype, bf16 and fp16 in turn.
std::vector<std::pair<Config, std::string>> covering_jobs(const std::string& tmpl,
                                                          const std::vector<Shape>& shapes,
                                                          const DeviceLimits& limits);

// Compiles each (config, dtype) of the template, two at a time; results in the same order.
std::vector<CompileResult> compile_pairwise(const TemplateSpec& tmpl,
                                            const std::vector<std::pair<Config, std::string>>& jobs,
                                            const DeviceLimits& limits);

}  // namespace kt::test
