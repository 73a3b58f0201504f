// Helpers for compile tests of a family's templates: the survivors of one template for a shape,
// a small set of them that covers every value of every axis, and an NVRTC compile of a variant
// exactly as the job runner builds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/variant_space.hpp"

namespace kt::test {

// The template named `name` of the family; throws if it has none.
const TemplateSpec& template_named(const Family& family, const std::string& name);

// The variants of template `name` that survive the constraints for the shape on `limits`.
std::vector<VariantPlan> survivors(const Family& family, const std::string& name,
                                   const Shape& shape, const std::string& dtype,
                                   const DeviceLimits& limits);

// Greedy cover: keeps picking the plan that adds the most unseen (axis, value) pairs.
std::vector<VariantPlan> covering_set(const std::vector<VariantPlan>& plans);

// NVRTC compile of one variant for limits.arch with the family's sources as headers. A variant
// that compiles with 0 registers in its report fails the calling test.
CompileResult compile_variant(const Family& family, const TemplateSpec& tmpl, const Config& config,
                              const std::string& dtype, const DeviceLimits& limits);

// What every compiled Hopper wgmma kernel must show: a register count, no spills and no stack
// frame, only dynamic shared memory, and ptxas neither ignoring setmaxnreg (C7508) nor serialising
// the wgmma pipeline. `what` names the variant in the failure messages.
void expect_clean_wgmma_compile(const CompileResult& result, const std::string& what);

// Limits of an arch without a GPU, with the SM count of a typical part (the persistent grids and
// split-K constraints depend on it).
DeviceLimits limits_with_sms(const std::string& arch, int sm_count);

}  // namespace kt::test
